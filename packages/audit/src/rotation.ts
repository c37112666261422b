import { basename, dirname, extname, join } from 'node:path';

/**
 * When and how the writer rotates the trail while running.
 *
 * Contract (docs/AUDIT.md, "Rotation"):
 * - With a rotation policy the trail lives in segments, `NAME.<UTC
 *   yyyymmddThhmmssSSSZ>.EXT` (`audit.20261201T112638123Z.jsonl` for
 *   `audit.jsonl`), and `NAME.EXT` is a symbolic link to the current one.
 *   Segments are created with `O_EXCL` and never renamed; the link is
 *   replaced atomically (a new link renamed over it). The names sort in time
 *   order, and one glob (`audit.*.jsonl`) matches every segment but neither
 *   the link nor the lock file, so a shipper reads each record under one name.
 * - Before a record is written, under the trail's lock, a new segment is
 *   started when the current one holds at least `maxBytes` bytes, or when
 *   its first record is at least `maxAgeMs` old. An empty segment is never
 *   rotated: a segment is at most `maxBytes` plus one record long, and
 *   rotation by age happens at the first record after the age was reached.
 * - The first record of a new segment continues the chain: `seq` goes on,
 *   `prev_hash` is the last record's hash, and `prev_file` names the
 *   previous segment.
 * - A trail started without rotation (`NAME.EXT` a regular file) is renamed
 *   to its own segment name once, at its first rotation.
 */
export interface RotationPolicy {
  /** Rotate once the file holds this many bytes (> 0). */
  readonly maxBytes?: number;
  /** Rotate once the file's first record is this old, in ms (> 0). */
  readonly maxAgeMs?: number;
}

/** `audit.20261201T112638123Z.jsonl` or `audit.20261201T112638123Z-2.jsonl`: the names rotated files get. */
const ROTATED = /^(.*)\.(\d{8}T\d{9}Z)(?:-(\d+))?(\.[^.]+)?$/;

/** `NAME` and `.EXT` of a file name (`.EXT` is empty when the name has no extension). */
function splitExtension(name: string): { stem: string; ext: string } {
  const ext = extname(name);
  return ext === '' || ext === name ? { stem: name, ext: '' } : { stem: name.slice(0, -ext.length), ext };
}

/** The rotated-file name for `path` at `at`, with a counter from 2 on when that name is taken. */
export function rotatedPath(path: string, at: Date, attempt = 1): string {
  const stamp = at.toISOString().replace(/[-:.]/g, '');
  const { stem, ext } = splitExtension(basename(path));
  return join(dirname(path), `${stem}.${stamp}${attempt > 1 ? `-${attempt}` : ''}${ext}`);
}

/** For a rotated file's name: the active file's name and a sort key (stamp, counter); else null. */
export function parseRotatedName(name: string): { base: string; key: string } | null {
  const match = ROTATED.exec(name);
  if (match === null || match[1] === '') return null;
  return { base: `${match[1]}${match[4] ?? ''}`, key: `${match[2]}-${(match[3] ?? '1').padStart(6, '0')}` };
}

/** True when a file of `size` bytes whose first record was written at `startedAt` must be rotated. */
export function isRotationDue(
  policy: RotationPolicy,
  size: number,
  startedAt: number | null,
  now: number,
): boolean {
  if (size === 0) return false;
  if (policy.maxBytes !== undefined && size >= policy.maxBytes) return true;
  return policy.maxAgeMs !== undefined && startedAt !== null && now - startedAt >= policy.maxAgeMs;
}

/** Checks a policy's numbers; throws a `RangeError` that names the bad one. */
export function assertRotationPolicy(policy: RotationPolicy): void {
  for (const [name, value] of [
    ['maxBytes', policy.maxBytes],
    ['maxAgeMs', policy.maxAgeMs],
  ] as const) {
    if (value !== undefined && (!Number.isSafeInteger(value) || value <= 0)) {
      throw new RangeError(`audit rotation ${name} must be a positive integer, got ${value}`);
    }
  }
}
