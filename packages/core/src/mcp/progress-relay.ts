import { StringDecoder } from 'node:string_decoder';

/** Room the skip note needs, whatever its numbers. */
const SKIP_NOTE_RESERVE = 160;
/** The smallest `maxMessageChars`: room for the note and some text. */
export const MIN_MESSAGE_CHARS = 2 * SKIP_NOTE_RESERVE;

export interface ProgressRelayOptions {
  /** Shortest time between two notifications. Default 50 ms (at most ~20 a second). */
  readonly intervalMs?: number;
  /**
   * Most characters one notification's message carries, the skip note
   * included. When a command writes faster than that, the oldest pending
   * text is skipped and the message says how much; `progress` still counts
   * every byte. Default 1 MiB; at least {@link MIN_MESSAGE_CHARS}.
   */
  readonly maxMessageChars?: number;
}

/**
 * Turns a terminal's output chunks into coalesced progress notifications.
 *
 * Contract:
 * - `progress` is the terminal's running byte total and strictly increases
 *   from one notification to the next.
 * - Coalescing loses nothing: the messages, concatenated, are the text of
 *   every byte pushed (characters split across chunks are joined), unless the
 *   per-message cap forced a skip, which the message then states.
 * - After `finish` or `discard`, nothing more is sent.
 * - Backpressure: while the last notification is not yet written (the
 *   client reads slowly), the next one waits and keeps coalescing, so at
 *   most one notification and `maxMessageChars` of text are held per wait.
 */
export class ProgressRelay {
  private readonly decoder = new StringDecoder('utf8');
  private readonly intervalMs: number;
  private readonly maxMessageChars: number;
  private pending: string[] = [];
  private pendingChars = 0;
  private skippedChars = 0;
  private latestTotal = 0;
  private sentTotal = 0;
  private timer: NodeJS.Timeout | null = null;
  private lastSentAt = 0;
  private done = false;
  /** A notification handed to `send` and not yet written. */
  private sending = false;

  constructor(
    private readonly send: (progress: number, message: string) => Promise<void> | void,
    options: ProgressRelayOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? 50;
    this.maxMessageChars = Math.max(MIN_MESSAGE_CHARS, options.maxMessageChars ?? 1024 * 1024);
  }

  push(chunk: Uint8Array, totalBytes: number): void {
    if (this.done) return;
    this.append(this.decoder.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)));
    this.latestTotal = totalBytes;
    this.schedule();
  }

  /** Sends what is pending (including a dangling partial character) and stops. */
  finish(): void {
    if (this.done) return;
    this.append(this.decoder.end());
    this.flush(true);
    this.stop();
  }

  /** Stops without sending anything more. */
  discard(): void {
    this.stop();
  }

  private append(text: string): void {
    if (text === '') return;
    this.pending.push(text);
    this.pendingChars += text.length;
    // Once anything is skipped the message starts with a note: keep room for it.
    const cap = () =>
      this.skippedChars > 0 ? this.maxMessageChars - SKIP_NOTE_RESERVE : this.maxMessageChars;
    while (this.pendingChars > cap() && this.pending.length > 0) {
      const excess = this.pendingChars - cap();
      const head = this.pending[0]!;
      if (head.length <= excess) {
        this.pending.shift();
        this.pendingChars -= head.length;
        this.skippedChars += head.length;
      } else {
        this.pending[0] = head.slice(excess);
        this.pendingChars -= excess;
        this.skippedChars += excess;
      }
    }
  }

  private schedule(): void {
    if (this.timer !== null) return;
    const wait = Math.max(0, this.lastSentAt + this.intervalMs - Date.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flush();
    }, wait);
  }

  private flush(final = false): void {
    if (this.done || this.latestTotal <= this.sentTotal) return;
    // Periodic updates wait for the previous one to be written; the final one
    // goes at once (the channel keeps order) so it precedes the response.
    if (this.sending && !final) return;
    let message = this.pending.join('');
    if (this.skippedChars > 0) {
      message = `[termgate: ${this.skippedChars} characters skipped in this update; terminal_output has the retained output]\n${message}`;
    }
    this.pending = [];
    this.pendingChars = 0;
    this.skippedChars = 0;
    this.sentTotal = this.latestTotal;
    this.lastSentAt = Date.now();
    const written = this.send(this.sentTotal, message);
    if (written === undefined) return;
    this.sending = true;
    void written.then(
      () => this.written(),
      () => this.written(),
    );
  }

  private written(): void {
    this.sending = false;
    if (!this.done && this.latestTotal > this.sentTotal) this.schedule();
  }

  private stop(): void {
    this.done = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}
