import { closeSync, openSync, readSync } from 'node:fs';

/** One line of an audit file, as bytes. */
export interface AuditLine {
  /** 1-based line number. */
  readonly lineNo: number;
  /** The line without its newline. */
  readonly bytes: Buffer;
  /** False only for a last line that has no newline after it (a truncated write). */
  readonly terminated: boolean;
}

const CHUNK = 1 << 20;

/**
 * Reads a file line by line, synchronously, in 1 MiB chunks (memory is
 * bounded by the longest line). Closes the file when the iteration ends,
 * including early. I/O errors (ENOENT, EACCES, EISDIR) are thrown.
 */
export function* readAuditLines(path: string): Generator<AuditLine> {
  const fd = openSync(path, 'r');
  try {
    yield* readAuditLinesAt(fd, 0, Number.POSITIVE_INFINITY);
  } finally {
    closeSync(fd);
  }
}

/**
 * The lines of the bytes `[start, end)` of an open file (`end` may be
 * `Infinity`: up to the end of the file), read with positioned reads so the
 * fd's offset is not used. Line numbers count from 1 at `start`.
 */
export function* readAuditLinesAt(fd: number, start: number, end: number): Generator<AuditLine> {
  let pending: Buffer[] = [];
  let lineNo = 0;
  let position = start;
  while (position < end) {
    // A fresh chunk per read: the lines yielded are views into it, never overwritten.
    const chunk = Buffer.allocUnsafe(Math.min(CHUNK, end - position));
    const n = readSync(fd, chunk, 0, chunk.length, position);
    if (n === 0) break;
    position += n;
    let from = 0;
    for (let nl = chunk.indexOf(0x0a, 0); nl !== -1 && nl < n; nl = chunk.indexOf(0x0a, from)) {
      const piece = chunk.subarray(from, nl);
      const bytes = pending.length === 0 ? piece : Buffer.concat([...pending, piece]);
      pending = [];
      lineNo += 1;
      yield { lineNo, bytes, terminated: true };
      from = nl + 1;
    }
    if (from < n) pending.push(chunk.subarray(from, n));
  }
  if (pending.length > 0) {
    yield { lineNo: lineNo + 1, bytes: Buffer.concat(pending), terminated: false };
  }
}
