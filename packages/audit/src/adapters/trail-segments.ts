import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  linkSync,
  lstatSync,
  openSync,
  readlinkSync,
  renameSync,
  type Stats,
  symlinkSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { ChainHead } from '../chain.js';
import { readAuditLinesAt } from '../line-reader.js';
import { rotatedPath } from '../rotation.js';
import { isSealedRecord, openSealedLine, type SealedRecord } from '../sealed-record.js';
import { readChainTail } from '../tail.js';
import { newestRotatedSibling } from '../trail-files.js';
import { verifyAuditLines } from '../verify.js';
import { AppendLock, type AppendLockOptions } from './append-lock.js';

/**
 * File operations of a rotating trail, for `TrailFile`. All of
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

/** A name in the trail directory that a new segment could not take: something else is there. */
export interface TakenName {
  readonly name: string;
  /** What is there: `regular file`, `symbolic link`, `directory`, … */
  readonly kind: string;
}

/** A new segment: its fd, the previous segment's name, and the names it skipped. */
export interface StartedSegment {
  readonly fd: number;
  readonly previousName: string | null;
  /**
   * Names the segment skipped because something that is not a regular file
   * was there (a planted link, a directory, …): tampering to report. A
   * regular file at the name (two rotations in one millisecond) is skipped
   * silently.
   */
  readonly planted: readonly TakenName[];
}

/** Names tried per segment (`NAME.<stamp>-N.EXT`) before rotation fails (fail closed). */
const MAX_NAME_ATTEMPTS = 1000;

/**
 * Starts a new segment: creates `NAME.<stamp>.EXT` next to `path` (mode
 * 0600, `O_EXCL`, never over an existing name) and points `path`, a symbolic
 * link, at it (a new link renamed over `path`: atomic). Segments are never
 * renamed, so a shipper that tails `NAME.*.EXT` sees each file under one
 * name. When `path` is still a regular file (a trail started without
 * rotation), it is first given its own stamped name (a hard link, which
 * like `O_EXCL` never replaces an existing name), once.
 * A name that is taken, whatever is there (never followed: a dangling link
 * counts), moves to the next (`-2`, `-3`, …); after 1000 the rotation fails.
 * Throws the errno error.
 */
export function startSegment(path: string, at: Date): StartedSegment {
  const planted: TakenName[] = [];
  let previousName: string | null = null;
  let link: Stats | null = null;
  try {
    link = lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (link?.isSymbolicLink()) {
    previousName = basename(readlinkSync(path));
  } else if (link !== null) {
    const renamed = claimSegmentName(path, at, planted, (target) => linkSync(path, target));
    previousName = basename(renamed);
  }
  let fd = -1;
  const segment = claimSegmentName(path, at, planted, (target) => {
    fd = openSync(target, ACTIVE_FLAGS | constants.O_CREAT | constants.O_EXCL, 0o600);
  });
  try {
    const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.link`);
    symlinkSync(basename(segment), temporary);
    renameSync(temporary, path);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return { fd, previousName, planted };
}

/**
 * Tries `create` on `NAME.<stamp>.EXT`, then `-2`, `-3`, … while it fails
 * with EEXIST, noting each name held by something that is not a regular
 * file in `planted`. Returns the name `create` succeeded on.
 */
function claimSegmentName(
  path: string,
  at: Date,
  planted: TakenName[],
  create: (target: string) => void,
): string {
  for (let attempt = 1; attempt <= MAX_NAME_ATTEMPTS; attempt += 1) {
    const target = rotatedPath(path, at, attempt);
    try {
      create(target);
      return target;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const kind = entryKind(target);
    if (kind !== 'regular file') planted.push({ name: basename(target), kind });
  }
  throw Object.assign(
    new Error(
      `no free segment name: ${MAX_NAME_ATTEMPTS} names for ${basename(rotatedPath(path, at))} are taken`,
    ),
    { code: 'EEXIST' },
  );
}

/** What is at `path`, without following a link. */
function entryKind(path: string): string {
  try {
    const stats = lstatSync(path);
    if (stats.isFile()) return 'regular file';
    if (stats.isSymbolicLink()) return 'symbolic link';
    if (stats.isDirectory()) return 'directory';
    if (stats.isFIFO()) return 'FIFO';
    if (stats.isSocket()) return 'socket';
    return 'device';
  } catch {
    return 'entry removed since';
  }
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

/**
 * With rotation, a trail lives in segments and `path` is a link to the
 * current one: when `path` does not exist, its first segment is made here,
 * under the trail's lock (two writers starting together make one).
 */
export function startFirstSegment(
  path: string,
  lockOptions: AppendLockOptions | undefined,
  now: () => Date,
): void {
  const lock = new AppendLock(path, lockOptions);
  lock.acquire();
  try {
    if (!existsSync(path)) {
      const { fd } = startSegment(path, now());
      closeSync(fd);
    }
  } finally {
    lock.release();
  }
}

/** The file's first record's time (ms), or null when it has none. */
export function firstRecordTime(fd: number): number | null {
  const first = readFirstRecord(fd);
  return first === null || 'problem' in first ? null : recordTime(first);
}

/**
 * For a new, empty active file: the newest rotated file next to it and its
 * last record, which the new file continues. Null when there is none. Throws
 * `AUDIT_TAIL_CORRUPT` when that file's last record cannot be continued.
 */
export function continuedFile(path: string): { name: string; head: ChainHead } | null {
  let current: string | null = null;
  try {
    current = basename(readlinkSync(path));
  } catch {
    // A regular file: not a segment.
  }
  const previous = newestRotatedSibling(path, current);
  if (previous === null) return null;
  // O_NOFOLLOW: a link swapped in after the sibling was listed is refused, not followed.
  const fd = openSync(previous, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const tail = readChainTail(fd, fstatSync(fd).size, previous);
    return tail === null ? null : { name: basename(previous), head: tail.head };
  } finally {
    closeSync(fd);
  }
}
