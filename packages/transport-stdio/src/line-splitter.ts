/** What the splitter reports for one line of input. */
export type LineEvent =
  | { readonly kind: 'line'; readonly text: string }
  | { readonly kind: 'too-long'; readonly bytes: number };

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/**
 * Splits a byte stream into lines.
 *
 * Contract:
 * - Lines end with `\n`; a trailing `\r` is removed (`\r\n` is accepted).
 * - A line is decoded as UTF-8 only once it is complete, so a chunk boundary
 *   never splits a character.
 * - A line longer than `maxLineBytes` is reported once as `too-long` (with
 *   its full length) and its bytes are discarded as they stream past:
 *   memory stays bounded by `maxLineBytes` plus one chunk.
 * - Empty lines are skipped.
 * - Work is O(total bytes): no chunk is scanned twice.
 */
export class LineSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Bytes of the current over-long line, once it went past the limit. */
  private discarding: number | null = null;

  constructor(private readonly maxLineBytes: number) {}

  push(chunk: Buffer, emit: (event: LineEvent) => void): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline === -1 ? chunk.length : newline;
      this.take(chunk.subarray(start, end));
      if (newline === -1) return;
      this.finishLine(emit);
      start = newline + 1;
    }
  }

  /** At end of input: a final line without `\n` still counts. */
  end(emit: (event: LineEvent) => void): void {
    this.finishLine(emit);
  }

  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.discarding !== null) {
      this.discarding += piece.length;
      return;
    }
    if (this.pendingBytes + piece.length > this.maxLineBytes + 1) {
      // +1 leaves room for a trailing `\r` on a line exactly at the limit.
      this.discarding = this.pendingBytes + piece.length;
      this.pending = [];
      this.pendingBytes = 0;
      return;
    }
    this.pending.push(piece);
    this.pendingBytes += piece.length;
  }

  private finishLine(emit: (event: LineEvent) => void): void {
    if (this.discarding !== null) {
      const bytes = this.discarding;
      this.discarding = null;
      emit({ kind: 'too-long', bytes });
      return;
    }
    if (this.pendingBytes === 0) return;
    let line = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    if (line[line.length - 1] === CARRIAGE_RETURN) line = line.subarray(0, line.length - 1);
    if (line.length > this.maxLineBytes) {
      emit({ kind: 'too-long', bytes: line.length });
      return;
    }
    if (line.length === 0) return;
    emit({ kind: 'line', text: line.toString('utf8') });
  }
}
