import { spawnSync } from 'node:child_process';
import { lstatSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { isInside } from '../policy-file/policy-paths.js';
import type { RunLaterPolicy } from '../policy-file/policy-types.js';
import { readSmallFile, subdirectories } from './git-dir-scan.js';

/** One entry of the run-later set: a name relative to a project directory. */
export interface RunLaterEntry {
  /** Relative to the project directory; a trailing `/` is a directory. */
  readonly path: string;
  /** Where it applies: in a repository's working tree, or where a `package.json` is. */
  readonly where: 'repository' | 'package';
  /** What runs it later on the host. */
  readonly why: string;
}

/**
 * What the person's own tools run later, outside the sandbox, from a
 * project directory (docs/RUN-LATER.md lists it with the reasons). Kept
 * read-only by the kernel whether or not it exists yet. The git dirs
 * themselves are `protectGit`'s; the hooks directories git uses
 * (`core.hooksPath`) and bare repositories are found on disk.
 */
export const RUN_LATER_SET: readonly RunLaterEntry[] = [
  { path: '.husky/', where: 'repository', why: 'husky: the hooks that core.hooksPath=.husky/_ runs' },
  { path: 'lefthook.yml', where: 'repository', why: 'lefthook: the commands its installed hooks run' },
  { path: '.lefthook.yml', where: 'repository', why: 'lefthook: read when lefthook.yml is absent' },
  { path: 'lefthook-local.yml', where: 'repository', why: 'lefthook: merged over lefthook.yml' },
  {
    path: '.pre-commit-config.yaml',
    where: 'repository',
    why: 'pre-commit: the hooks its installed hook runs',
  },
  { path: '.npmrc', where: 'package', why: 'npm and pnpm: script-shell, node-options, … name a command' },
  { path: '.yarnrc', where: 'package', why: 'yarn 1: yarn-path names the program yarn runs' },
  { path: '.yarnrc.yml', where: 'package', why: 'yarn 2+: yarnPath, plugins name code yarn runs' },
];

/** The name `core.hooksPath` takes in `runLater.remove`: stop protecting the hooks directories git is set to use. */
export const HOOKS_PATH_ENTRY = 'core.hooksPath';

/** What the run-later set adds to one profile. */
export interface RunLaterPaths {
  /** Entries that exist (files or directories, without symlinks). */
  readonly readOnly: string[];
  /** Entries that do not exist yet. */
  readonly placeholderDirectories: string[];
  readonly placeholderFiles: string[];
}

/**
 * Finds the run-later set in each writable root: in the root, its direct
 * subdirectories and each directory from `cwd` up to the root (the same
 * places the git-dir scan looks), every repository's working tree gets the
 * `repository` entries, the hooks directory git will use there
 * (`core.hooksPath` from the repository's, the global and the system
 * configuration, as `git config --type=path` reads it; relative to the
 * working tree, or to the git dir of a bare repository, as git runs
 * hooks) and the policy's `add` entries; every directory with a
 * `package.json` gets the `package` entries; a bare repository (a
 * directory that is a git dir: `HEAD`, `objects/`, `refs/`, by `lstat`) is
 * read-only as a whole. Entries outside every writable root are left out
 * (already read-only).
 *
 * Throws when an entry is a symlink: what it points to cannot be kept
 * read-only for the person's tools (the gate then refuses the create).
 */
export function runLaterPaths(
  writable: readonly string[],
  cwd: string,
  policy: RunLaterPolicy | undefined,
): RunLaterPaths {
  const removed = new Set((policy?.remove ?? []).map((r) => r.path));
  const entries = [
    ...RUN_LATER_SET.filter((e) => !removed.has(e.path)),
    ...(policy?.add ?? []).map((a) => ({ path: a.path, where: 'repository' as const, why: a.reason })),
  ];
  const writableDir = (path: string): boolean => writable.some((root) => isInside(path, root));
  const readOnly = new Set<string>();
  const directories = new Set<string>();
  const files = new Set<string>();
  const protect = (path: string, directory: boolean): void => {
    if (!writableDir(path)) return;
    const kind = kindOf(path);
    if (kind === 'symlink') {
      throw new Error(`${path} is a symlink: the run-later set cannot keep what it points to read-only`);
    }
    if (kind === null) (directory ? directories : files).add(path);
    else readOnly.add(path);
  };
  const outside = lazyOutsideHooksPath();
  for (const dir of projectDirectories(writable, cwd)) {
    // A .git directory is protectGit's (and not a bare repository's working tree).
    if (basename(dir) === '.git') continue;
    if (isBareRepository(dir)) {
      readOnly.add(dir);
      if (!removed.has(HOOKS_PATH_ENTRY)) {
        const hooks = hooksPath(dir, dir, outside);
        if (hooks !== null) protect(hooks, true);
      }
      continue;
    }
    const repository = kindOf(join(dir, '.git')) === 'directory' || kindOf(join(dir, '.git')) === 'file';
    const pkg = kindOf(join(dir, 'package.json')) === 'file';
    for (const entry of entries) {
      if (entry.where === 'repository' ? !repository : !pkg) continue;
      protect(join(dir, entry.path.replace(/\/+$/, '')), entry.path.endsWith('/'));
    }
    if (repository && !removed.has(HOOKS_PATH_ENTRY)) {
      const hooks = hooksPath(join(dir, '.git'), dir, outside);
      if (hooks !== null) protect(hooks, true);
    }
  }
  // A path inside another protected one is covered by it.
  const all = [...readOnly, ...directories];
  const covered = (path: string): boolean => all.some((p) => p !== path && isInside(path, p));
  return {
    readOnly: [...readOnly].filter((p) => !covered(p)),
    placeholderDirectories: [...directories].filter((p) => !covered(p)),
    placeholderFiles: [...files].filter((p) => !covered(p)),
  };
}

/**
 * The writable roots, each directory from `cwd` up to its root, and the
 * direct subdirectories of a *workspace* root (one that holds `cwd` or lies
 * inside it), read with the git-dir scan's bound: the places that scan looks
 * at, so that package caches filled with directories cost nothing.
 */
function projectDirectories(writable: readonly string[], cwd: string): string[] {
  const dirs = new Set<string>();
  for (const root of writable) {
    if (kindOf(root) !== 'directory') continue;
    dirs.add(root);
    if (isInside(cwd, root) || isInside(root, cwd)) {
      for (const child of subdirectories(root)) dirs.add(child);
    }
    if (!isInside(cwd, root)) continue;
    for (let dir = cwd; isInside(dir, root); dir = dirname(dir)) {
      if (kindOf(dir) === 'directory') dirs.add(dir);
      if (dir === root) break;
    }
  }
  return [...dirs];
}

/** A directory that is a git dir: `HEAD` a file, `objects/` and `refs/` directories (symlinks not followed). */
export function isBareRepository(dir: string): boolean {
  return (
    kindOf(join(dir, 'HEAD')) === 'file' &&
    kindOf(join(dir, 'objects')) === 'directory' &&
    kindOf(join(dir, 'refs')) === 'directory'
  );
}

/**
 * The hooks directory git is configured to use for the repository whose
 * git dir (or `.git` file) is `gitDir`, resolved against `base` (its working
 * tree, or the git dir of a bare repository), or null when git uses its
 * default (`hooks/` inside the git dir, which `protectGit` covers). The
 * explicit `--git-dir` reads the repository's, the global and the system
 * configuration without the ownership check of discovery; `config --get`
 * runs nothing the configuration names.
 *
 * When git cannot read the repository's configuration (exit 128: a stale
 * worktree, a broken config), null: the person's git cannot use it either,
 * so it runs no hook from it. A read that stalls (a FIFO planted as a
 * config or an include) throws: the gate then refuses the create rather
 * than leave a hooks directory unknown.
 */
function hooksPath(gitDir: string, base: string, outside: () => string | null): string | null {
  // A repository whose own config neither sets the key nor includes another file uses the
  // global and system value, read once per profile: no git process per repository.
  if (kindOf(gitDir) === 'directory') {
    const config = readSmallFile(join(gitDir, 'config'));
    if (config !== null && config.length < 4096 && !/hookspath|include/i.test(config)) {
      const value = outside();
      return value === null ? null : resolve(base, value);
    }
  }
  const value = gitConfigHooksPath(['--git-dir', gitDir], base, gitDir);
  return value === null ? null : resolve(base, value);
}

/** `core.hooksPath` from the global and system configuration only, read at most once. */
function lazyOutsideHooksPath(): () => string | null {
  let read = false;
  let value: string | null = null;
  return () => {
    if (!read) {
      value = gitConfigHooksPath([], '/', 'the global and system git configuration');
      read = true;
    }
    return value;
  };
}

/** The raw `core.hooksPath` git reads with `scope` (options before `config`), or null when unset. */
function gitConfigHooksPath(scope: readonly string[], cwd: string, what: string): string | null {
  const result = spawnSync('git', [...scope, 'config', '--type=path', '--get', 'core.hooksPath'], {
    cwd,
    // The server's environment (HOME, GIT_CONFIG_GLOBAL, …): the configuration the person's git reads.
    env: process.env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
    timeout: 3000,
  });
  if (result.error !== undefined || result.signal !== null) {
    throw new Error(
      `git could not read the configuration of ${what} in time: its hooks directory is unknown`,
    );
  }
  if (result.status !== 0) return null;
  const value = result.stdout.replace(/\n$/, '');
  return value === '' ? null : value;
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
