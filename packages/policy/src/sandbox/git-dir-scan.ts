import { closeSync, constants, fstatSync, lstatSync, opendirSync, openSync, readSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { isInside, realpathOrNull } from '../policy-file/policy-paths.js';

/** Entries of one workspace root read at most, per create, to find the repositories one level down. */
export const MAX_SCANNED_ENTRIES = 4096;
/** Mounts one command's sandbox may have at most (bwrap refuses more than 9000 arguments). */
export const MAX_MOUNTS = 1024;

/**
 * The git dirs a command's sandbox keeps read-only (see `SandboxProfiler`):
 * in each writable root, the root's own, and each one from the command's
 * cwd up to the root. The direct subdirectories of a root are looked at only
 * where a repository can matter: a *workspace* root, one that holds the
 * command's cwd or lies inside it. Package caches (`~/.npm`, `~/.cache/…`)
 * are writable roots too but no one works in them: a command filling them
 * with directories costs the next create nothing.
 *
 * Bounded: a workspace root is read entry by entry (`opendir`, never the
 * whole listing at once), and one with more than `MAX_SCANNED_ENTRIES`
 * entries refuses the create with an error naming it (an unscanned
 * subdirectory could hold an unprotected repository). Only `.git` paths
 * without symlinks are followed, with `lstat`: what a command planted cannot
 * steer a mount, and a FIFO named `.git` cannot stall the gate.
 */
export function gitDirScan(writable: readonly string[], cwd: string): string[] {
  const candidates = new Set<string>();
  for (const root of writable) {
    candidates.add(root);
    if (isInside(cwd, root) || isInside(root, cwd)) {
      for (const child of subdirectories(root)) candidates.add(child);
    }
    if (isInside(cwd, root)) {
      for (let dir = cwd; isInside(dir, root); dir = dirname(dir)) {
        candidates.add(dir);
        if (dir === root) break;
      }
    }
  }
  const paths = new Set<string>();
  for (const dir of candidates) for (const path of gitPathsOf(dir)) paths.add(path);
  return [...paths];
}

/**
 * Refuses a profile with more than `MAX_MOUNTS` mounts, naming the
 * directory that holds most of them: past bwrap's argument limit every
 * command would fail with a message that says nothing of the cause.
 */
export function assertMountCount(mounts: readonly string[], writable: readonly string[]): void {
  if (mounts.length <= MAX_MOUNTS) return;
  let worst = writable[0] ?? '/';
  let most = -1;
  for (const root of writable) {
    const inside = mounts.filter((path) => isInside(path, root)).length;
    if (inside > most) [worst, most] = [root, inside];
  }
  throw new Error(
    `the sandbox would need ${mounts.length} mounts (at most ${MAX_MOUNTS}): ${worst} holds ${most} of them (repositories or protected paths); remove what you do not need there`,
  );
}

/** The kind of `path` itself (symlinks not followed), or null when it does not exist. */
function kindOf(path: string): 'directory' | 'file' | 'symlink' | 'other' | null {
  try {
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) return 'symlink';
    if (stat.isDirectory()) return 'directory';
    return stat.isFile() ? 'file' : 'other';
  } catch {
    return null;
  }
}

/**
 * What makes `dir` a repository: its `.git` directory; or its `.git` file
 * and the git dirs that file names (`gitdir:`, then that one's `commondir`),
 * when they exist without symlinks.
 */
function gitPathsOf(dir: string): string[] {
  const dotGit = join(dir, '.git');
  const kind = kindOf(dotGit);
  if (kind === 'directory') return [dotGit];
  if (kind !== 'file') return [];
  const found = [dotGit];
  const gitDir = pointer(dotGit, /^gitdir:\s*(.+?)\s*$/m, dir);
  if (gitDir === null) return found;
  found.push(gitDir);
  const common = pointer(join(gitDir, 'commondir'), /^(.+?)\s*$/m, gitDir);
  if (common !== null) found.push(common);
  return found;
}

/** The directory a small regular file names (relative to `base`), when it exists without symlinks. */
function pointer(file: string, pattern: RegExp, base: string): string | null {
  const text = readSmallFile(file);
  if (text === null) return null;
  const match = pattern.exec(text);
  if (match === null) return null;
  const target = resolve(base, match[1]!);
  return kindOf(target) === 'directory' && realpathOrNull(target) === target ? target : null;
}

/**
 * The first 4 KiB of a regular file, or null. Opened without following a
 * symlink and without blocking, then checked on the descriptor: a FIFO or
 * device swapped in after a check can neither stall nor redirect the read.
 */
export function readSmallFile(file: string): string | null {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    if (!fstatSync(fd).isFile()) return null;
    const buffer = Buffer.alloc(4096);
    const length = readSync(fd, buffer, 0, buffer.length, 0);
    return buffer.subarray(0, length).toString('utf8');
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** The direct subdirectories of `dir`; throws once it has more than `MAX_SCANNED_ENTRIES` entries. */
export function subdirectories(dir: string): string[] {
  let handle: ReturnType<typeof opendirSync>;
  try {
    handle = opendirSync(dir, { bufferSize: 256 });
  } catch {
    return [];
  }
  const found: string[] = [];
  try {
    for (let seen = 0; ; seen++) {
      const entry = handle.readSync();
      if (entry === null) return found;
      if (seen >= MAX_SCANNED_ENTRIES) {
        throw new Error(
          `${dir} holds more than ${MAX_SCANNED_ENTRIES} entries, too many to look for repositories in before every command; remove what you do not need there`,
        );
      }
      if (entry.isDirectory()) found.push(join(dir, entry.name));
    }
  } finally {
    handle.closeSync();
  }
}
