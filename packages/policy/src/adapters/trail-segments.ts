import { closeSync, constants, existsSync, fstatSync, openSync, renameSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { ChainHead } from '../audit/chain.js';
import { readAuditLinesAt } from '../audit/line-reader.js';
import { rotatedPath } from '../audit/rotation.js';
import { isSealedRecord, openSealedLine, type SealedRecord } from '../audit/sealed-record.js';
import { verifyAuditLines } from '../audit/verify.js';

/**
 * File operations of a rotating trail, for `CheckedFileDestination`. All of
 * them run under the trail's lock (`AppendLock`), whose path does not change
 * when the active file is renamed.
 */

/** The first record of an open file: null when empty, a problem when it is not a sealed record. */
export function readFirstRecord(fd: number): SealedRecord | { problem: string } | null {
  const first = readAuditLinesAt(fd, 0, Number.POSITIVE_INFINITY).next();
  if (first.done === true) return null;
  if (!first.value.terminated) return { problem: 'its first record is truncated' };
  return openSealedLine(first.value.bytes);
}

/** `@timestamp` of a sealed record in ms, or null. */
export function recordTime(record: SealedRecord): number | null {
  const at = Date.parse(String(record.record['@timestamp']));
  return Number.isNaN(at) ? null : at;
}

/**
 * Checks that the bytes `[start, end)` of `fd` are records that continue the
 * chain after `after` (null: from an anchor). Returns the last record and the
 * offset of its line, or a problem sentence.
 */
export function verifyRange(
  fd: number,
  start: number,
  end: number,
  after: ChainHead | null,
): { head: ChainHead | null; lastOffset: number } | { problem: string } {
  let offset = start;
  let lastOffset = start;
  const result = verifyAuditLines(
    (function* measured() {
      for (const line of readAuditLinesAt(fd, start, end)) {
        lastOffset = offset;
        offset += line.bytes.length + 1;
        yield line;
      }
    })(),
    after,
  );
  if (!result.ok) return { problem: `at seq ${result.seq}: ${result.problem}` };
  return { head: result.head, lastOffset };
}

const ACTIVE_FLAGS = constants.O_APPEND | constants.O_RDWR;

/** Opens the existing active file for appending and reading (never creates it). Throws the errno error. */
export function openActive(path: string): number {
  return openSync(path, ACTIVE_FLAGS);
}

/**
 * Renames the active file to its rotated name (never over an existing file)
 * and creates a new, empty active file (mode 0600, `O_EXCL`). Returns the new
 * fd and the rotated file's name. Throws the errno error; when the rename
 * happened but the create failed, the path is left missing, which every
 * writer reports as `AUDIT_FILE_REPLACED` (fail closed).
 */
export function rotateActive(path: string, at: Date): { fd: number; rotatedName: string } {
  let target = rotatedPath(path, at);
  for (let attempt = 2; existsSync(target); attempt += 1) target = rotatedPath(path, at, attempt);
  renameSync(path, target);
  const fd = openSync(path, ACTIVE_FLAGS | constants.O_CREAT | constants.O_EXCL, 0o600);
  return { fd, rotatedName: basename(target) };
}

/**
 * After the active file changed under a writer (another writer rotated it),
 * finds the files that lead from `head` (the end of the file the writer knew)
 * to `activeFd`: the active file, and before it, by their first record's
 * `prev_file`, files rotated since. Returns them oldest first, without the
 * writer's old file; null when the active file does not continue `head`
 * (replaced, not rotated). Each returned fd except `activeFd` must be closed
 * by the caller.
 */
export function filesSince(
  path: string,
  activeFd: number,
  head: ChainHead | null,
): { fd: number; name: string }[] | null {
  const chain: { fd: number; name: string }[] = [{ fd: activeFd, name: basename(path) }];
  const closeOpened = () => {
    for (const file of chain) if (file.fd !== activeFd) closeSync(file.fd);
  };
  for (let hops = 0; hops < 64; hops += 1) {
    const first = readFirstRecord(chain[0]!.fd);
    if (first === null || !isSealedRecord(first)) break;
    if (head !== null && first.seq === head.seq + 1 && first.prevHash === head.hash) return chain;
    const prevFile = first.record.prev_file;
    if (typeof prevFile !== 'string' || prevFile.includes('/') || first.seq <= (head?.seq ?? 0) + 1) break;
    let fd: number;
    try {
      fd = openSync(join(dirname(path), prevFile), 'r');
    } catch {
      break;
    }
    if (!fstatSync(fd).isFile()) {
      closeSync(fd);
      break;
    }
    chain.unshift({ fd, name: prevFile });
  }
  closeOpened();
  return null;
}
