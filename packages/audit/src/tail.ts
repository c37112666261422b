import { readSync } from 'node:fs';
import { AuditError } from './audit-error.js';
import type { ChainHead } from './chain.js';
import { headOf, isSealedRecord, openSealedLine } from './sealed-record.js';

const CHUNK = 64 * 1024;
/** A last line longer than this is treated as corrupt rather than read whole. */
const MAX_RECORD_BYTES = 16 * 1024 * 1024;

/**
 * Reads the last record of an audit file of `size` bytes through `fd` (opened
 * for reading) and returns where the chain continues. Returns null for an
 * empty file. Throws `AUDIT_TAIL_CORRUPT` when the last line is truncated, is
 * not a sealed record, or does not match its own hash: the writer must not
 * continue a chain it cannot vouch for. Only the last record is checked;
 * `verifyAuditFile` checks the rest.
 */
export function readChainHead(fd: number, size: number, path: string): ChainHead | null {
  return readChainTail(fd, size, path)?.head ?? null;
}

/** `readChainHead`, plus the byte offset where the last record's line starts. */
export function readChainTail(
  fd: number,
  size: number,
  path: string,
): { head: ChainHead; offset: number } | null {
  if (size === 0) return null;
  const corrupt = (why: string) =>
    new AuditError(
      'AUDIT_TAIL_CORRUPT',
      `audit file ${path} cannot be continued: ${why}. Run \`termgate audit verify ${path}\`, then move the file aside or use another path`,
    );
  const last = Buffer.alloc(1);
  readSync(fd, last, 0, 1, size - 1);
  if (last[0] !== 0x0a) throw corrupt('its last record is truncated (no newline at the end of the file)');

  // Walk back from the final newline to the one before it.
  const parts: Buffer[] = [];
  let end = size - 1;
  let start = -1;
  while (end > 0 && start === -1) {
    const from = Math.max(0, end - CHUNK);
    const buf = Buffer.alloc(end - from);
    readSync(fd, buf, 0, buf.length, from);
    const nl = buf.lastIndexOf(0x0a);
    if (nl === -1) {
      parts.unshift(buf);
      end = from;
    } else {
      parts.unshift(buf.subarray(nl + 1));
      start = from + nl + 1;
    }
    if (size - 1 - end > MAX_RECORD_BYTES) throw corrupt('its last line is longer than 16 MiB');
  }
  const opened = openSealedLine(Buffer.concat(parts));
  if (!isSealedRecord(opened)) throw corrupt(`its last record is damaged (${opened.problem})`);
  return { head: headOf(opened), offset: start === -1 ? 0 : start };
}
