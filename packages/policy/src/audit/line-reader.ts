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
    const chunk = Buffer.allocUnsafe(CHUNK);
    let pending: Buffer[] = [];
    let lineNo = 0;
    for (;;) {
      const n = readSync(fd, chunk, 0, CHUNK, null);
      if (n === 0) break;
      let start = 0;
      for (let nl = chunk.indexOf(0x0a, 0); nl !== -1 && nl < n; nl = chunk.indexOf(0x0a, start)) {
        const piece = Buffer.from(chunk.subarray(start, nl));
        const bytes = pending.length === 0 ? piece : Buffer.concat([...pending, piece]);
        pending = [];
        lineNo += 1;
        yield { lineNo, bytes, terminated: true };
        start = nl + 1;
      }
      if (start < n) pending.push(Buffer.from(chunk.subarray(start, n)));
    }
    if (pending.length > 0) {
      yield { lineNo: lineNo + 1, bytes: Buffer.concat(pending), terminated: false };
    }
  } finally {
    closeSync(fd);
  }
}
