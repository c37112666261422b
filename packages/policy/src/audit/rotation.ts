import { basename, dirname, join } from 'node:path';

/**
 * When the writer rotates the active audit file (rename-and-reopen).
 *
 * Contract (docs/AUDIT.md, "Rotation"):
 * - Before a record is written, under the file's lock, the active file is
 *   rotated when it holds at least `maxBytes` bytes, or when its first record
 *   is at least `maxAgeMs` old. An empty file is never rotated. A file is
 *   therefore at most `maxBytes` plus one record long, and rotation by age
 *   happens at the first record written after the age was reached.
 * - Rotating renames `FILE` to `FILE.<UTC yyyymmddThhmmssSSSZ>` (never over
 *   an existing name) and creates a new, empty `FILE`. Shippers that follow a
 *   path by inode (rsyslog imfile, Filebeat, Fluent Bit, Vector) finish the
 *   renamed file and pick up the new one.
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

/** `FILE.20261201T112638123Z` or `FILE.20261201T112638123Z-2`: the names rotated files get. */
const ROTATED = /^(.+)\.(\d{8}T\d{9}Z)(?:-(\d+))?$/;

/** The rotated-file name for `path` at `at`, with a counter from 2 on when that name is taken. */
export function rotatedPath(path: string, at: Date, attempt = 1): string {
  const stamp = at.toISOString().replace(/[-:.]/g, '');
  return join(dirname(path), `${basename(path)}.${stamp}${attempt > 1 ? `-${attempt}` : ''}`);
}

/** For a rotated file's name: the active file's name and a sort key (stamp, counter); else null. */
export function parseRotatedName(name: string): { base: string; key: string } | null {
  const match = ROTATED.exec(name);
  if (match === null) return null;
  return { base: match[1]!, key: `${match[2]}-${(match[3] ?? '1').padStart(6, '0')}` };
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
