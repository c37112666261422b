import { realpathSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { isAbsolute, resolve, sep } from 'node:path';

/**
 * Resolves a directory written in a policy file: `${SERVER_CWD}` (the
 * process cwd when the policy is loaded), `${HOME}`, `${TMPDIR}` and a
 * leading `~` are expanded; a relative path is relative to the policy
 * file's directory; symlinks are resolved when the path exists.
 */
export function resolvePolicyDir(written: string, policyDir: string, serverCwd?: string): string {
  const path = expandPolicyPath(written, serverCwd);
  const absolute = isAbsolute(path) ? resolve(path) : resolve(policyDir, path);
  try {
    return realpathSync(absolute);
  } catch {
    return absolute;
  }
}

/**
 * Expands `${SERVER_CWD}` (`serverCwd`, by default the process cwd),
 * `${HOME}`, `${TMPDIR}` and a leading `~` in a path written in a policy file.
 */
export function expandPolicyPath(written: string, serverCwd: string = process.cwd()): string {
  const path = written
    .replaceAll(placeholder('SERVER_CWD'), serverCwd)
    .replaceAll(placeholder('HOME'), homeDirectory())
    .replaceAll(placeholder('TMPDIR'), tmpdir());
  return path === '~' || path.startsWith('~/') ? homeDirectory() + path.slice(1) : path;
}

/**
 * The home directory a command's `~` means: the HOME a terminal inherits
 * from the server (HOME itself cannot be set by a judged line or client
 * under a policy that denies it), else the account's home directory.
 */
export function homeDirectory(): string {
  return process.env.HOME || homedir();
}

/** True when `path` is `dir` or below it (both absolute and normalised). */
export function isInside(path: string, dir: string): boolean {
  if (path === dir) return true;
  const prefix = dir.endsWith(sep) ? dir : dir + sep;
  return path.startsWith(prefix);
}

/** The realpath of `path`, or `null` when it does not exist or is unreadable. */
export function realpathOrNull(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}

/** `${NAME}` as written in a policy file. */
function placeholder(name: string): string {
  return ['$', '{', name, '}'].join('');
}

/**
 * The workspace a rule's `match:`/`notMatch:` examples are judged in: a
 * fixed, synthetic directory standing for `${SERVER_CWD}` (it does not
 * exist, and is neither the home directory nor below it), so an example's
 * verdict never depends on where the server starts. Started in `~`, the
 * real workspace would make `cat .npmrc` read `~/.npmrc`.
 */
export const EXAMPLE_WORKSPACE = '/termgate-examples/workspace';
