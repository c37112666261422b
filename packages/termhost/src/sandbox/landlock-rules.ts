import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { SandboxProfile } from '../sandbox-profile.js';
import type { PathRule } from './landlock-launcher.js';

/**
 * A sandbox profile as Landlock rules (the Landlock tier, docs/SANDBOX-TIERS.md).
 *
 * Landlock only grants, by hierarchy: a rule on a directory grants its whole
 * tree. So a path that must stay unreadable (an emptied tree, a hidden path,
 * the host's `/tmp` and `/dev/shm`) or unwritable (a read-only carve-out or a
 * placeholder inside a writable directory) is kept out by granting its
 * siblings, one level at a time down to it, and never a directory above it.
 * The price: in a directory on the way to a protected path (a workspace root
 * holding `.git`, say), entries that exist can be written, but nothing can be
 * created, removed or renamed in that directory itself. Symbolic links met
 * on the way are not granted (a rule would follow them to their target).
 */

/** Landlock's filesystem access rights (uapi `LANDLOCK_ACCESS_FS_*`, ABI 1-5). */
export const FS = Object.freeze({
  EXECUTE: 1,
  WRITE_FILE: 2,
  READ_FILE: 4,
  READ_DIR: 8,
  REMOVE_DIR: 16,
  REMOVE_FILE: 32,
  MAKE_CHAR: 64,
  MAKE_DIR: 128,
  MAKE_REG: 256,
  MAKE_SOCK: 512,
  MAKE_FIFO: 1024,
  MAKE_BLOCK: 2048,
  MAKE_SYM: 4096,
  REFER: 8192,
  TRUNCATE: 16384,
  IOCTL_DEV: 32768,
});

/** Every filesystem right of ABI 5 and later: the ruleset handles them all, so each is refused unless granted. */
export const HANDLED_FS = 0xffff;
/** `LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP` (ABI 4). */
export const HANDLED_NET = 3;
/** `LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL` (ABI 6). */
export const SCOPED = 3;
/** The lowest ABI these rules need: 6, for the scopes (Linux 6.12). */
export const LANDLOCK_MIN_ABI = 6;

export const READ = FS.EXECUTE | FS.READ_FILE | FS.READ_DIR;
/** Everything but creating device nodes. */
export const WRITE = HANDLED_FS & ~(FS.MAKE_CHAR | FS.MAKE_BLOCK);
const DEVICE = FS.READ_FILE | FS.WRITE_FILE | FS.TRUNCATE | FS.IOCTL_DEV;

/** The devices a command may write (as every shell redirection to /dev/null needs). */
const WRITABLE_DEVICES = Object.freeze([
  '/dev/null',
  '/dev/zero',
  '/dev/full',
  '/dev/random',
  '/dev/urandom',
  '/dev/tty',
  '/dev/ptmx',
  '/dev/pts',
]);

/** Host directories no command reads in this tier: each terminal gets its own `/tmp` (`tmp`) instead. */
const NEVER_READ = Object.freeze(['/tmp', '/dev/shm']);

/**
 * The rules for `profile`, with `tmp` (a directory of this terminal's own,
 * or `null`) writable in place of the private `/tmp`.
 */
export function landlockRules(profile: SandboxProfile, tmp: string | null): PathRule[] {
  const fs = profile.filesystem;
  const unreadable = clean([
    ...(fs.emptied ?? []),
    ...fs.hiddenDirectories,
    ...fs.hiddenFiles,
    ...NEVER_READ,
  ]);
  const protectedPaths = clean([
    ...fs.readOnly,
    ...(fs.placeholderDirectories ?? []),
    ...(fs.placeholderFiles ?? []),
    ...fs.hiddenDirectories,
    ...fs.hiddenFiles,
  ]);
  const rules: PathRule[] = [];
  cover('/', READ, unreadable, rules);
  cover('/dev', FS.IOCTL_DEV, unreadable, rules);
  for (const path of clean([...(fs.readable ?? []), ...fs.writable, ...fs.readOnly])) {
    cover(path, READ, unreadable, rules);
  }
  for (const path of clean(fs.writable)) cover(path, WRITE, [...protectedPaths, ...unreadable], rules);
  for (const path of WRITABLE_DEVICES) rules.push({ access: DEVICE, path });
  if (tmp !== null) rules.push({ access: READ | WRITE, path: tmp });
  return rules;
}

/** Grants `access` on `root`'s tree, or, when an `excluded` path lies in it, on each of its other entries. */
function cover(root: string, access: number, excluded: readonly string[], out: PathRule[]): void {
  if (excluded.includes(root)) return;
  const inside = excluded.filter((path) => path.startsWith(root === '/' ? '/' : `${root}/`));
  if (inside.length === 0) {
    out.push({ access, path: root });
    return;
  }
  let entries: import('node:fs').Dirent[];
  try {
    entries = readdirSync(root, { withFileTypes: true });
  } catch {
    return; // not a directory we can list: nothing of it is granted
  }
  for (const entry of entries) {
    if (entry.isSymbolicLink()) continue;
    cover(join(root, entry.name), access, inside, out);
  }
}

/** Absolute paths without a trailing slash (a placeholder's mark), each once. */
function clean(paths: readonly string[]): string[] {
  return [...new Set(paths.map((p) => (p.length > 1 && p.endsWith('/') ? p.slice(0, -1) : p)))];
}
