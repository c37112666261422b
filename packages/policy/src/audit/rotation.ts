import { basename, dirname, extname, join } from 'node:path';

/**
 * When the writer rotates the active audit file (rename-and-reopen).
 *
 * Contract (docs/AUDIT.md, "Rotation"):
 * - Before a record is written, under the file's lock, the active file is
 *   rotated when it holds at least `maxBytes` bytes, or when its first record
 *   is at least `maxAgeMs` old. An empty file is never rotated. A file is
 *   therefore at most `maxBytes` plus one record long, and rotation by age
 *   happens at the first record written after the age was reached.
 * - Rotating renames `NAME.EXT` to `NAME.<UTC yyyymmddThhmmssSSSZ>.EXT`
 *   (`audit.jsonl` to `audit.20261201T112638123Z.jsonl`; never over an
 *   existing name) and creates a new, empty `NAME.EXT`. The rotated names sort
 *   in time order, keep the extension (one glob, `audit*.jsonl`, matches the
 *   trail and not its lock file), and shippers that follow files by inode
 *   (rsyslog imfile, Filebeat, Fluent Bit, Vector) finish the renamed file
 *   and pick up the new one.
 * - The first record of the new file continues the chain: `seq` goes on,
 *   `prev_hash` is the last record's hash, and `prev_file` names the file the
 *   previous records were renamed to.
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
