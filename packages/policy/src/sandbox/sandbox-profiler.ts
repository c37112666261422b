import { lstatSync } from 'node:fs';
import { dirname } from 'node:path';
import type { SandboxProfile } from '@termgate/termhost';
import { isInside, realpathOrNull } from '../policy-file/policy-paths.js';
import type { SandboxPolicy } from '../policy-file/policy-types.js';
import type { SandboxProfileSource } from '../ports/sandbox-profile-source.js';
import { assertMountCount, gitDirScan } from './git-dir-scan.js';
import { runLaterPaths } from './run-later.js';
import { viewOf } from './view.js';

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
  /** Read at every `profile` call, so a getter may list what changes (rotated audit files). */
  readonly protect: ProtectedPaths;
}

/**
 * Turns the policy's `sandbox` section into the profile one command runs
 * under. Called for every allowed create, because what it protects is on
 * disk: a repository cloned by one command is protected from the next one on.
 *
 * Git (`protectGit`), in each writable directory W: the git dirs of W, of
 * each directory from the command's cwd up to W and, when W is a workspace
 * root, of its direct subdirectories are read-only as a whole (bounded, see
 * `git-dir-scan.ts`; more than `MAX_MOUNTS` mounts refuse the create) (a `.git` directory; or a `.git` file, the
 * directory its `gitdir:` names and that one's `commondir`). Only paths
 * without symlinks are followed, with `lstat`: what a command planted cannot
 * steer a mount, and a FIFO named `.git` cannot stall the gate.
 *
 * Every read-only or hidden path inside a writable directory has the
 * directories between it and that writable directory bound onto themselves
 * too: a mount point cannot be renamed, so a command cannot move a
 * protected path's parent aside and put its own file in its place.
 *
 * The view (`view.ts`): the allowlisted trees emptied but for the readable,
 * writable and allowed-socket paths inside them, the system's secrets
 * hidden, every host socket in view and not allowed covered. The run-later
 * set (`run-later.ts`) is read-only in each writable directory; a protected
 * path that does not exist yet (a run-later entry, a `readOnly` path of the
 * policy: a directory when written with a trailing `/`) gets a placeholder.
 *
 * Fails closed: a read-only or hidden path of the policy that now resolves
 * through a symlink throws (the gate then refuses the create), and so does
 * a run-later entry that is a symlink.
 */
export class SandboxProfiler implements SandboxProfileSource {
  constructor(
    private readonly policy: SandboxPolicy,
    private readonly options: SandboxProfilerOptions,
  ) {}

  get enabled(): boolean {
    return this.policy.mode === 'required';
  }

  profile(cwd: string): SandboxProfile {
    const writable = this.policy.writable.filter((path) => kindOf(path) !== null);
    const tmp = this.policy.privateTmp ? this.options.privateTmp : null;
    // A host path under /tmp is not inside the private /tmp (another directory mounted there).
    const insideWritable = (path: string): boolean => writable.some((root) => isInside(path, root));
    const pins = new Set<string>();
    const pin = (path: string): void => {
      for (let dir = dirname(path); insideWritable(dir) && !writable.includes(dir); dir = dirname(dir)) {
        pins.add(dir);
      }
    };
    const readOnly = new Set<string>();
    const placeholderDirectories = new Set<string>();
    const placeholderFiles = new Set<string>();
    for (const written of [...this.policy.readOnly, ...this.options.protect.readOnly]) {
      // A trailing slash says what a path that does not exist yet is to be: a directory.
      const path = written.length > 1 && written.endsWith('/') ? written.slice(0, -1) : written;
      if (!insideWritable(path)) continue;
      if (canonical(path)) readOnly.add(path);
      else if (canonicalParent(path))
        (path === written ? placeholderFiles : placeholderDirectories).add(path);
    }
    if (this.policy.protectGit) {
      for (const path of gitDirScan(writable, cwd)) if (insideWritable(path)) readOnly.add(path);
    }
    const later = runLaterPaths(writable, cwd, this.policy.runLater);
    for (const path of later.readOnly) readOnly.add(path);
    for (const path of later.placeholderDirectories) placeholderDirectories.add(path);
    for (const path of later.placeholderFiles) placeholderFiles.add(path);
    const hidden = [...new Set([...this.policy.hidden, ...this.options.protect.hidden])].filter(canonical);
    const view = viewOf(
      this.policy,
      writable,
      tmp !== null,
      hidden.filter((path) => kindOf(path) === 'directory'),
    );
    // What lies in an emptied tree and in nothing shown through it is not there to hide.
    const shown = [...view.readable, ...view.sockets, ...writable];
    const visible = (path: string): boolean =>
      !view.emptied.some((tree) => isInside(path, tree)) || shown.some((dir) => isInside(path, dir));
    const hiddenDirectories: string[] = [...view.hiddenDirectories];
    const hiddenFiles: string[] = [...view.hiddenFiles];
    for (const path of hidden) {
      if (!visible(path)) continue;
      if (kindOf(path) === 'directory') hiddenDirectories.push(path);
      else hiddenFiles.push(path);
    }
    for (const path of [...hiddenDirectories, ...hiddenFiles]) if (insideWritable(path)) pin(path);
    for (const path of [...readOnly, ...placeholderDirectories, ...placeholderFiles]) pin(path);
    assertMountCount(
      [
        ...readOnly,
        ...placeholderDirectories,
        ...placeholderFiles,
        ...hiddenDirectories,
        ...hiddenFiles,
        ...view.readable,
        ...view.sockets,
        ...pins,
      ],
      writable,
    );
    return {
      filesystem: {
        emptied: view.emptied,
        readable: view.readable,
        sockets: view.sockets,
        writable: [...writable, ...[...pins].filter((dir) => !writable.includes(dir))],
        readOnly: [...readOnly],
        placeholderDirectories: [...placeholderDirectories],
        placeholderFiles: [...placeholderFiles],
        hiddenDirectories,
        hiddenFiles,
        tmp,
      },
      network: this.policy.network === 'all' ? 'all' : this.policy.network === 'none' ? 'none' : 'proxy',
    };
  }
}

/**
 * True when `path` does not exist but its nearest existing ancestor does,
 * without a symlink on the way; throws when that ancestor leads through one
 * (a placeholder's mount point would be created where the link points).
 */
function canonicalParent(path: string): boolean {
  // A dangling symlink: bwrap would create the mount point where it points.
  if (kindOf(path) !== null) throw new Error(`${path} is a symlink to a path that does not exist`);
  let dir = dirname(path);
  while (realpathOrNull(dir) === null && dir !== dirname(dir)) dir = dirname(dir);
  return canonical(dir);
}

/** True when `path` exists without a symlink on the way; false when it does not exist; throws otherwise. */
function canonical(path: string): boolean {
  const real = realpathOrNull(path);
  if (real === null) return false;
  if (real !== path) throw new Error(`${path} now resolves through a symlink to ${real}`);
  return true;
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
