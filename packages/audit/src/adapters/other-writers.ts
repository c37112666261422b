import { type BigIntStats, closeSync, fstatSync, statSync } from 'node:fs';
import { AuditError, describeCause } from '../audit-error.js';
import type { ChainHead } from '../chain.js';
import { readAuditLinesAt } from '../line-reader.js';
import { isSealedRecord, openSealedLine } from '../sealed-record.js';
import { verifyAuditLines } from '../verify.js';
import { filesSince, firstRecordTime, openActive, verifyRange } from './trail-segments.js';

/**
 * Catching up with the other writers of a shared trail, under its lock:
 * what they appended to our file must chain from our last record, and a
 * rotation one of them made must continue our chain. Used by
 * `TrailFile.append` before each record.
 *
 * Every function here throws `AuditError` when the trail cannot be
 * continued; the trail file then stops (fail-stop), so nothing is written
 * after a tail that was not verified.
 */

/** The file a writer writes, as it last left it; the functions here update it when they move on. */
export interface WriterFile {
  readonly path: string;
  fd: number;
  /** dev/ino of a regular file; null for devices, FIFOs, … */
  identity: Pick<BigIntStats, 'dev' | 'ino'> | null;
  /** The file's size after the last record we know of (ours or verified). */
  size: bigint;
  /** Where the line of that record starts. */
  headOffset: bigint;
  /** The file's mtime (ns) as we last left it: unchanged size and mtime mean nobody else wrote. */
  mtimeNs: bigint;
  /** False while the chain's last known record is in the previous (rotated) file: this one is still empty. */
  headInFile: boolean;
  /** `prev_file` for the next record: set when the current file continues a rotated one and is still empty. */
  pendingPrevFile: string | null;
  /** When the current file's first record was written (ms), for rotation by age. */
  startedAt: number | null;
}

function fail(code: AuditError['code'], message: string, cause?: unknown): AuditError {
  return new AuditError(code, message, { cause });
}

/**
 * Under the lock: checks the file is still ours and that everything from our
 * last known record to the end of the file chains from `knownHead`. Returns
 * the file's last record (the head to link to). Throws `AuditError` (the trail file then stops)
 * otherwise.
 */
export function catchUpWithOtherWriters(file: WriterFile, knownHead: ChainHead | null): ChainHead | null {
  let now: BigIntStats;
  try {
    now = statSync(file.path, { bigint: true });
  } catch (error) {
    throw fail('AUDIT_FILE_REPLACED', `audit file ${file.path} is gone: ${describeCause(error)}`, error);
  }
  if (now.dev !== file.identity?.dev || now.ino !== file.identity.ino) return followRotation(file, knownHead);
  return catchUpFile(file, knownHead, now);
}

/**
 * The path names another file than ours. That is a rotation by another
 * writer when our file is still linked and intact to its end, and the new
 * active file (through the files rotated since, by their `prev_file`)
 * continues its last record. Then we switch to the new file and return its
 * last record. Otherwise it is `AUDIT_FILE_REPLACED` (or `AUDIT_TAIL_CORRUPT`).
 */
function followRotation(file: WriterFile, knownHead: ChainHead | null): ChainHead | null {
  const replaced = (why: string, cause?: unknown) =>
    fail(
      'AUDIT_FILE_REPLACED',
      `audit file ${file.path} was replaced or renamed since it was opened: ${why}`,
      cause,
    );
  const own = fstatSync(file.fd, { bigint: true });
  if (own.nlink === 0n) throw replaced('the file we wrote was removed');
  let head = catchUpFile(file, knownHead, own);
  let fd: number;
  try {
    fd = openActive(file.path);
  } catch (error) {
    throw replaced(describeCause(error), error);
  }
  let files: { fd: number; name: string }[] | null = null;
  try {
    files = filesSince(file.path, fd, head);
    if (files === null) {
      throw replaced(`the new file does not continue the chain after seq ${head?.seq ?? 0}`);
    }
    let lastOffset = 0;
    for (const segment of files) {
      const checked = verifyRange(segment.fd, 0, Number(fstatSync(segment.fd).size), head);
      if ('problem' in checked) {
        throw fail(
          'AUDIT_TAIL_CORRUPT',
          `audit file ${file.path} was rotated, and ${segment.name} does not chain: ${checked.problem}. Nothing was written`,
        );
      }
      head = checked.head;
      lastOffset = checked.lastOffset;
    }
    const stats = fstatSync(fd, { bigint: true });
    closeSync(file.fd);
    file.fd = fd;
    file.identity = stats;
    file.size = stats.size;
    file.mtimeNs = stats.mtimeNs;
    file.headOffset = BigInt(lastOffset);
    file.headInFile = true;
    file.startedAt = firstRecordTime(fd);
    file.pendingPrevFile = null;
    return head;
  } catch (error) {
    closeSync(fd);
    if (AuditError.is(error)) throw error;
    throw fail(
      'AUDIT_WRITE_FAILED',
      `cannot read rotated audit files of ${file.path}: ${describeCause(error)}`,
      error,
    );
  } finally {
    for (const segment of files ?? []) if (segment.fd !== fd) closeSync(segment.fd);
  }
}

/** Checks what other writers appended to our own file (`now`: its stats) since our last record. */
function catchUpFile(file: WriterFile, knownHead: ChainHead | null, now: BigIntStats): ChainHead | null {
  // Size and mtime as we left them: no other writer appended or edited since our last record.
  if (now.size === file.size && now.mtimeNs === file.mtimeNs) return knownHead;
  if (now.size < file.size) {
    throw fail(
      'AUDIT_FILE_REPLACED',
      `audit file ${file.path} was truncated (${file.size} bytes expected, ${now.size} found)`,
    );
  }
  const broken = (why: string) =>
    fail(
      'AUDIT_TAIL_CORRUPT',
      `audit file ${file.path} was changed by another writer and does not chain: ${why}. Nothing was written; run \`termgate audit verify ${file.path}\``,
    );
  let lines: ReturnType<typeof readAuditLinesAt>;
  let head = knownHead;
  try {
    lines = readAuditLinesAt(file.fd, Number(file.headOffset), Number(now.size));
    if (knownHead !== null && file.headInFile) {
      // Our last known record must still be there, byte for byte.
      const first = lines.next();
      const opened =
        first.done === true || !first.value.terminated ? null : openSealedLine(first.value.bytes);
      if (
        opened === null ||
        !isSealedRecord(opened) ||
        opened.hash !== knownHead.hash ||
        opened.seq !== knownHead.seq
      ) {
        throw broken(`the last record known to this writer (seq ${knownHead.seq}) was changed`);
      }
    }
    if (now.size === file.size) return head;
    let lastLength = 0;
    const result = verifyAuditLines(
      (function* measured() {
        for (const line of lines) {
          lastLength = line.bytes.length + 1;
          yield line;
        }
      })(),
      knownHead,
    );
    if (!result.ok) throw broken(`at seq ${result.seq}: ${result.problem}`);
    head = result.head;
    if (result.records > 0) {
      // Another writer wrote this file's first record (with its `prev_file`): ours follows it.
      file.headInFile = true;
      file.pendingPrevFile = null;
    }
    // The chain is verified up to the end of the file; the next record links to its last line.
    file.headOffset = now.size - BigInt(lastLength);
  } catch (error) {
    if (AuditError.is(error)) throw error;
    throw fail('AUDIT_WRITE_FAILED', `cannot read audit file ${file.path}: ${describeCause(error)}`, error);
  }
  file.size = now.size;
  return head;
}
