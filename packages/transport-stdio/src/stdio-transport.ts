import type { Readable, Writable } from 'node:stream';
import { stringifyMessage, withExactId } from './exact-id.js';
import { type LineEvent, LineSplitter } from './line-splitter.js';

export interface StdioTransportOptions {
  /** Longest accepted line in bytes, without its newline. Default 4 MiB. */
  readonly maxLineBytes?: number;
  /**
   * Whether `close` ends the output stream. Default true; false for
   * `process.stdout`, which must not be ended while the process lives.
   */
  readonly endOutputOnClose?: boolean;
  /**
   * How long a write may wait for the peer to read (no write settles) before
   * the peer counts as gone: writes fail and `onclose` fires, as on end of
   * input. Default {@link DEFAULT_STALL_TIMEOUT_MS}.
   */
  readonly stallTimeoutMs?: number;
}

/** A framing problem the transport met; the protocol layer decides how to answer it. */
export type FramingError =
  | { readonly kind: 'parse-error'; readonly message: string }
  | { readonly kind: 'line-too-long'; readonly bytes: number; readonly maxLineBytes: number };

export const DEFAULT_MAX_LINE_BYTES = 4 * 1024 * 1024;
export const DEFAULT_STALL_TIMEOUT_MS = 30_000;

/**
 * Newline-delimited JSON over a pair of byte streams. The streams are
 * injected: only the outermost edge passes `process.stdin`/`process.stdout`.
 * It moves whole JSON messages, one per line: it parses and serializes JSON
 * but never interprets a message (methods, ids and batches are the
 * protocol's). It satisfies the protocol core's `MessageChannel` port
 * structurally (this package imports nothing of ours; the cli's tests check
 * the assignment), with every optional flow-control member.
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
 *   fires after each queued write settled (the backlog shrank), so the owner
 *   can stop reading (`pause`) while a peer does not read. A peer that takes
 *   nothing for `stallTimeoutMs` while output waits is gone: pending and
 *   later writes fail and `onclose` fires, as on end of input.
 * - `pause` stops reading input until `resume` (the peer then blocks on a
 *   full pipe); neither has an effect after close.
 * - `onclose` fires once, when the input ended or `close` was called.
 *   After the input ended, `send` still works until `close`: answers to
 *   requests already received can go out during shutdown. `close` stops
 *   reading and ends the output once queued writes are flushed; it is
 *   idempotent.
 */
export class StdioTransport {
  onmessage?: (message: unknown) => void;
  onframingerror?: (error: FramingError) => void;
  onclose?: () => void;
  ondrain?: () => void;

  private readonly splitter: LineSplitter;
  private readonly maxLineBytes: number;
  private writeChain: Promise<void> = Promise.resolve();
  private started = false;
  private inputEnded = false;
  private closeNotified = false;
  private closed = false;
  private outputError: Error | null = null;
  /** Bytes passed to `send` and not yet handed to the stream. */
  private queuedBytes = 0;
  private readonly stallTimeoutMs: number;
  /** Settles the write waiting for 'drain', if any (used when the peer is declared gone). */
  private abortWait: (() => void) | null = null;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    private readonly options: StdioTransportOptions = {},
  ) {
    this.maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    this.stallTimeoutMs = options.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS;
    this.splitter = new LineSplitter(this.maxLineBytes);
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.input.on('data', this.onData);
    this.input.once('end', this.onEnd);
    this.input.once('close', this.onEnd);
    this.input.once('error', this.onEnd);
    // A peer that went away (EPIPE) ends the conversation; it never crashes the process.
    this.output.on('error', this.onOutputError);
  }

  send(message: unknown): Promise<void> {
    if (this.closed) return Promise.reject(new Error('transport is closed'));
    if (this.outputError) return Promise.reject(this.outputError);
    const line = `${stringifyMessage(message)}\n`;
    const bytes = Buffer.byteLength(line);
    this.queuedBytes += bytes;
    const write = this.writeChain.then(() => this.writeLine(line));
    // A failed write must not block the ones queued after it.
    this.writeChain = write
      .catch(() => undefined)
      .finally(() => {
        this.queuedBytes -= bytes;
        this.ondrain?.();
      });
    return write;
  }

  /** Output not yet read by the peer, in bytes: queued lines plus the stream's own buffer. */
  backlogBytes(): number {
    return this.queuedBytes + (this.output.writableLength ?? 0);
  }

  pause(): void {
    if (this.started && !this.inputEnded && !this.closed) this.input.pause();
  }

  resume(): void {
    if (this.started && !this.inputEnded && !this.closed) this.input.resume();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.detach();
    await this.writeChain;
    if ((this.options.endOutputOnClose ?? true) && !this.outputError && !this.output.destroyed) {
      await new Promise<void>((resolve) => this.output.end(resolve));
    }
    this.notifyClose();
  }

  private notifyClose(): void {
    if (this.closeNotified) return;
    this.closeNotified = true;
    this.onclose?.();
  }

  private writeLine(line: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (this.outputError) return reject(this.outputError);
      if (this.output.destroyed || this.output.writableEnded)
        return reject(new Error('output stream is closed'));
      if (this.output.write(line)) return resolve();
      const timer = setTimeout(() => this.peerGone(), this.stallTimeoutMs);
      timer.unref();
      const settle = (): void => {
        clearTimeout(timer);
        this.abortWait = null;
        this.output.off('drain', settle);
        this.output.off('close', settle);
        if (this.outputError) reject(this.outputError);
        else resolve();
      };
      this.abortWait = settle;
      this.output.on('drain', settle);
      this.output.on('close', settle);
    });
  }

  /** The peer left our output unread for `stallTimeoutMs`: it is gone, as if its input had ended. */
  private peerGone(): void {
    this.outputError ??= new Error(`the peer read nothing for ${this.stallTimeoutMs} ms`);
    this.abortWait?.();
    // Unsent bytes would hold the process open: nobody will read them.
    this.output.destroy();
    this.onEnd();
  }

  private readonly onOutputError = (error: Error): void => {
    this.outputError ??= error;
    this.onEnd();
  };

  private readonly onData = (chunk: Buffer | string): void => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    this.splitter.push(bytes, this.onLine);
  };

  /** End of input: the peer is gone. Sending stays possible until `close`, so in-flight answers can still go out. */
  private readonly onEnd = (): void => {
    if (this.inputEnded) return;
    this.inputEnded = true;
    this.splitter.end(this.onLine);
    this.detach();
    this.notifyClose();
  };

  private readonly onLine = (event: LineEvent): void => {
    if (event.kind === 'too-long') {
      this.onframingerror?.({ kind: 'line-too-long', bytes: event.bytes, maxLineBytes: this.maxLineBytes });
      return;
    }
    let message: unknown;
    try {
      message = withExactId(event.text, JSON.parse(event.text));
    } catch (error) {
      this.onframingerror?.({ kind: 'parse-error', message: (error as Error).message });
      return;
    }
    this.onmessage?.(message);
  };

  /** Stops reading: removing the listener alone leaves a flowing stdin holding the process open. */
  private detach(): void {
    this.input.pause();
    this.input.off('data', this.onData);
    this.input.off('end', this.onEnd);
    this.input.off('close', this.onEnd);
    this.input.off('error', this.onEnd);
    // A read error after we stopped listening must not become an uncaught 'error' event.
    this.input.on('error', ignoreError);
  }
}

function ignoreError(): void {}
