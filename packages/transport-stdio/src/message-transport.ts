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
 * - A top-level numeric `id` is delivered as a `LosslessNumber` (lossless-json)
 *   holding the exact text the peer sent, and `send` writes such an id back
 *   as that text: ids round-trip byte for byte (`1e2`, `9007199254740993`).
 * - `send` writes one message as one line; messages are written in call order
 *   and never interleave. It resolves once the line was handed to the stream
 *   without exceeding its buffer (backpressure is honoured).
 * - `backlogBytes()` is the output the peer has not taken yet; `ondrain`
 *   fires as it shrinks, so the owner can stop reading (`pause`) while a
 *   peer does not read. A peer that takes nothing for `stallTimeoutMs` while
 *   output waits is gone: pending and later writes fail and `onclose` fires,
 *   as on end of input.
 * - `onclose` fires once, when the input ended or `close` was called.
 *   After the input ended, `send` still works until `close`: answers to
 *   requests already received can go out during shutdown.
 */
export interface MessageTransport {
  onmessage?: (message: unknown) => void;
  onframingerror?: (error: FramingError) => void;
  onclose?: () => void;
  /** Called after each queued write settled: the backlog shrank. */
  ondrain?: () => void;
  start(): void;
  send(message: unknown): Promise<void>;
  /** Stops reading and ends the output once queued writes are flushed. Idempotent. */
  close(): Promise<void>;
  /** Stops reading input until `resume` (the peer then blocks on a full pipe). No effect after close. */
  pause(): void;
  resume(): void;
  /** Output not yet taken by the peer, in bytes. */
  backlogBytes(): number;
}
