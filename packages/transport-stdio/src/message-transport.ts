/** A framing problem the transport met; the protocol layer decides how to answer it. */
export type FramingError =
  | { readonly kind: 'parse-error'; readonly message: string }
  | { readonly kind: 'line-too-long'; readonly bytes: number; readonly maxLineBytes: number };

/**
 * Moves whole JSON messages, one per line. It parses and serializes JSON but
 * never interprets a message: methods, ids and batches are the protocol's.
 *
 * Contract:
 * - `onmessage` receives each parsed JSON value, in arrival order.
 * - `onframingerror` receives lines that are not JSON or are too long; the
 *   transport keeps reading after them.
 * - `send` writes one message as one line; messages are written in call order
 *   and never interleave. It resolves once the line was handed to the stream
 *   without exceeding its buffer (backpressure is honoured).
 * - `onclose` fires once, when the input ended or `close` was called.
 *   After the input ended, `send` still works until `close`: answers to
 *   requests already received can go out during shutdown.
 */
export interface MessageTransport {
  onmessage?: (message: unknown) => void;
  onframingerror?: (error: FramingError) => void;
  onclose?: () => void;
  start(): void;
  send(message: unknown): Promise<void>;
  /** Stops reading and ends the output once queued writes are flushed. Idempotent. */
  close(): Promise<void>;
  /** Stops reading input until `resume` (the peer then blocks on a full pipe). No effect after close. */
  pause(): void;
  resume(): void;
}
