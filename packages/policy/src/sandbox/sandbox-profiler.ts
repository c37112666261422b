import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { SandboxProfile } from '@termgate/termhost';
import { isInside } from '../policy-file/policy-paths.js';
import type { SandboxPolicy } from '../policy-file/policy-types.js';

/** Paths termgate protects whatever the policy says. */
export interface ProtectedPaths {
  /** Never writable from inside: the policy file, termgate's installation. */
  readonly readOnly: readonly string[];
  /** Neither readable nor writable from inside: the audit trail's directory, signing keys. */
  readonly hidden: readonly string[];
}

export interface SandboxProfilerOptions {
  /** The host directory mounted at `/tmp` when the policy asks for a private one. */
  readonly privateTmp: string | null;
  readonly protect: ProtectedPaths;
  /**
   * Create a missing `hooks` directory in a git dir so it can be carved out
   * (default true). `policy explain` passes false: it only reports.
   */
  readonly createMissingHooks?: boolean;
}

/**
 * Turns the policy's `sandbox` section into the profile one command runs
 * under. Called for every allowed create, because what it protects is on
 * disk: a repository cloned by the previous command has its `.git/config`
 * and hooks carved out for the next one.
 *
 * Git carve-outs (`protectGit`), in each writable directory W: the git dir
 * of W, of each of W's direct subdirectories, and of each directory from
 * the command's cwd up to W. A git dir is `.git`, or where a `.git` file's
 * `gitdir:` points (worktrees, submodules), plus its `commondir`. In each:
 * `config`, `hooks` (created empty when missing, so a command cannot create
 * it) and the same for every `modules/*`.
 */
export class SandboxProfiler {
  constructor(
    private readonly policy: SandboxPolicy,
    private readonly options: SandboxProfilerOptions,
  ) {}

  get enabled(): boolean {
    return this.policy.mode === 'required';
  }

  profile(cwd: string): SandboxProfile {
    const writable = this.policy.writable.filter((path) => existsSync(path));
    const tmp = this.policy.privateTmp ? this.options.privateTmp : null;
    // A host path under /tmp is not inside the private /tmp (another directory mounted there).
    const insideWritable = (path: string): boolean => writable.some((root) => isInside(path, root));
    const readOnly = new Set<string>();
    for (const path of [...this.policy.readOnly, ...this.options.protect.readOnly]) {
      if (existsSync(path) && insideWritable(path)) readOnly.add(path);
    }
    if (this.policy.protectGit) {
      for (const path of gitCarveOuts(writable, cwd, this.options.createMissingHooks ?? true)) {
        readOnly.add(path);
      }
    }
    const hiddenDirectories: string[] = [];
    const hiddenFiles: string[] = [];
    for (const path of new Set([...this.policy.hidden, ...this.options.protect.hidden])) {
      const kind = kindOf(path);
      if (kind === 'directory') hiddenDirectories.push(path);
      else if (kind === 'file') hiddenFiles.push(path);
    }
    return {
      filesystem: { writable, readOnly: [...readOnly], hiddenDirectories, hiddenFiles, tmp },
      network: this.policy.network === 'all' ? 'all' : this.policy.network === 'none' ? 'none' : 'proxy',
    };
  }
}

function kindOf(path: string): 'directory' | 'file' | null {
  try {
    return statSync(path).isDirectory() ? 'directory' : 'file';
  } catch {
    return null;
  }
}

function gitCarveOuts(writable: readonly string[], cwd: string, createHooks: boolean): string[] {
  const candidates = new Set<string>();
  for (const root of writable) {
    candidates.add(root);
    for (const child of subdirectories(root)) candidates.add(child);
    if (isInside(cwd, root)) {
      for (let dir = cwd; isInside(dir, root); dir = dirname(dir)) {
        candidates.add(dir);
        if (dir === root) break;
      }
    }
  }
  const carved: string[] = [];
  const seen = new Set<string>();
  for (const dir of candidates) {
    for (const gitDir of gitDirsOf(dir)) {
      if (seen.has(gitDir)) continue;
      seen.add(gitDir);
      carved.push(...protectedIn(gitDir, writable, createHooks));
      for (const module of subdirectories(join(gitDir, 'modules'))) {
        carved.push(...protectedIn(module, writable, createHooks));
      }
    }
  }
  return carved;
}

/** `config` and `hooks` of one git dir, when it lies inside a writable directory. */
function protectedIn(gitDir: string, writable: readonly string[], createHooks: boolean): string[] {
  if (!writable.some((root) => isInside(gitDir, root))) return [];
  const hooks = join(gitDir, 'hooks');
  if (createHooks && !existsSync(hooks)) {
    try {
      mkdirSync(hooks);
    } catch {
      // Not a git dir we can complete; what exists is still protected.
    }
  }
  return [join(gitDir, 'config'), hooks].filter((path) => existsSync(path));
}

/** The git dirs a directory's `.git` names: itself when a directory, else its `gitdir:` target and `commondir`. */
function gitDirsOf(dir: string): string[] {
  const dotGit = join(dir, '.git');
  const kind = kindOf(dotGit);
  if (kind === null) return [];
  let gitDir = dotGit;
  if (kind === 'file') {
    const match = /^gitdir:\s*(.+?)\s*$/m.exec(readText(dotGit));
    if (match === null) return [];
    gitDir = resolve(dir, match[1]!);
  }
  const dirs = [gitDir];
  const common = readText(join(gitDir, 'commondir')).trim();
  if (common !== '') dirs.push(resolve(gitDir, common));
  return dirs;
}

function subdirectories(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => join(dir, entry.name));
  } catch {
    return [];
  }
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
