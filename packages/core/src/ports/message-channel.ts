/** What went wrong in framing a line: not JSON, or longer than the channel's line limit. */
export type ChannelFramingError =
  | { readonly kind: 'parse-error'; readonly message: string }
  | { readonly kind: 'line-too-long'; readonly bytes: number; readonly maxLineBytes: number };

/**
 * The one transport contract: the message channel the protocol core runs
 * over, whole JSON values in and out. A channel never interprets a message
 * (methods, ids and batches are the protocol's). `StdioTransport`
 * (`@termgate/transport-stdio`, which imports nothing of ours) satisfies it
 * structurally; tests use in-memory channels.
 *
 * Contract:
 * - `onmessage` receives each message in arrival order; `onframingerror`
 *   each line that could not be framed, and the channel keeps reading.
 * - `send` preserves call order, one message at a time; it rejects once the
 *   channel is closed or its peer is gone.
 * - `onclose` fires once, when the peer is gone (end of input, or it stopped
 *   reading for too long) or the channel was closed. `close` is idempotent.
 */
export interface MessageChannel {
  onmessage?: (message: unknown) => void;
  onframingerror?: (error: ChannelFramingError) => void;
  onclose?: () => void;
  start(): void;
  send(message: unknown): Promise<void>;
  close(): Promise<void>;
  /**
   * Flow control, optional: stop delivering messages (input is left unread,
   * so the peer is slowed by its own backpressure) until `resume`. A relay
   * pauses one side while the other side's writes back up.
   */
  pause?(): void;
  resume?(): void;
  /** Flow control, optional: output not yet taken by the peer, in bytes. */
  backlogBytes?(): number;
  /** Called when queued output was taken by the peer (the backlog shrank). */
  ondrain?: () => void;
}
