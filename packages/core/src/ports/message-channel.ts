/** What went wrong in framing a line (mirrors the stdio transport's report). */
export type ChannelFramingError =
  | { readonly kind: 'parse-error'; readonly message: string }
  | { readonly kind: 'line-too-long'; readonly bytes: number; readonly maxLineBytes: number };

/**
 * The message channel the protocol core runs over: whole JSON values in and
 * out. The stdio transport implements it; tests use an in-memory pair.
 *
 * Contract: `send` preserves call order; `onclose` fires once when the peer
 * is gone (end of input) or the channel was closed.
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
