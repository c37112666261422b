import { execFileSync } from 'node:child_process';
import { realpathSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { findOnPath } from './executable-check.js';
import { SandboxUnavailableError } from './sandbox-unavailable-error.js';

/** The system user the install step creates for sandboxed commands of a server running as root. */
export const DEFAULT_SANDBOX_USER = 'termgate-sandbox';

/** The uid and gid sandboxed commands run as, when they are not the server's own. */
export interface SandboxIdentity {
  readonly user: string;
  readonly uid: number;
  readonly gid: number;
}

const SYSTEM_PATH = '/usr/bin:/bin:/usr/sbin:/sbin';

/**
 * Looks `user` up (through NSS, `id`); it must exist and not be root.
 * Throws {@link SandboxUnavailableError} naming the install step otherwise.
 */
export function resolveSandboxIdentity(user: string): SandboxIdentity {
  const id = (flag: string): number | null => {
    try {
      const out = execFileSync('id', [flag, '--', user], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
        env: { PATH: SYSTEM_PATH },
      });
      return /^\d+\n?$/.test(out) ? Number(out.trim()) : null;
    } catch {
      return null;
    }
  };
  const uid = id('-u');
  const gid = id('-g');
  if (uid === null || gid === null) {
    throw new SandboxUnavailableError(
      `termgate serves as root, and sandboxed commands must run as the unprivileged user "${user}", which does not exist`,
      `create it: node scripts/ensure-system-packages.mjs --runtime (or: useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin ${user}), or name another unprivileged user in the policy's sandbox.user`,
    );
  }
  if (uid === 0 || gid === 0) {
    throw new SandboxUnavailableError(
      `the sandbox user "${user}" is uid ${uid} / gid ${gid}: root to the kernel`,
      'name an unprivileged user (uid and gid other than 0) in sandbox.user',
    );
  }
  return { user, uid, gid };
}

/**
 * Makes the sandbox user able to work where the policy lets commands work,
 * with POSIX ACLs (Debian's `acl`, `setfacl`), leaving owners and modes alone:
 *
 * - every `writable` directory, recursively: read-write for the sandbox
 *   user, and as default ACLs, read-write for both the sandbox user and the
 *   directory's owner, so that what a command creates there stays usable
 *   by the person who owns the workspace (default ACLs also override the
 *   umask for new files);
 * - every directory above a writable or listed path that others cannot
 *   search: search (`x`) only, for the sandbox user; never read.
 *
 * Throws {@link SandboxUnavailableError} when setfacl is missing or fails
 * (a filesystem without ACLs, say): commands would not be able to work.
 */
export function grantSandboxAccess(
  identity: SandboxIdentity,
  writable: readonly string[],
  reached: readonly string[],
  /** Host sockets the policy allows by path: connectable (`rw`) for the sandbox user too. */
  connectable: readonly string[] = [],
): void {
  const setfacl = findOnPath('setfacl', SYSTEM_PATH);
  if (setfacl === null) {
    throw new SandboxUnavailableError(
      'setfacl was not found: the sandbox user cannot be given the workspace',
      'install the Debian/Ubuntu package "acl" (apt-get install acl)',
    );
  }
  const u = `u:${identity.uid}`;
  const run = (args: string[]): void => {
    try {
      execFileSync(setfacl, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: SYSTEM_PATH } });
    } catch (error) {
      const stderr = String((error as { stderr?: unknown }).stderr ?? '').trim();
      throw new SandboxUnavailableError(
        `cannot give the sandbox user "${identity.user}" access with setfacl ${args.join(' ')}: ${stderr || (error as Error).message}`,
        'keep the workspace and the writable directories on a filesystem with POSIX ACLs (ext4, xfs, btrfs, tmpfs)',
      );
    }
  };
  const searchOnly = new Set<string>();
  for (const path of [...writable, ...reached]) {
    for (let dir = dirname(path); dir !== dirname(dir); dir = dirname(dir)) {
      if (!othersCanSearch(dir)) searchOnly.add(dir);
    }
  }
  for (const dir of searchOnly) run(['-m', `${u}:x`, '--', dir]);
  for (const socket of connectable) {
    try {
      if (!statSync(socket).isSocket()) continue;
    } catch {
      continue; // not there (yet): bound only when it exists
    }
    run(['-m', `${u}:rw`, '--', socket]);
  }
  for (const root of writable) {
    let owner: number;
    let real: string;
    try {
      real = realpathSync(root);
      owner = statSync(real).uid;
    } catch {
      continue; // a writable directory that does not exist is not bound
    }
    // -P: a physical walk, no symbolic link followed, not even one swapped in for a directory
    // (or for the root itself, hence its canonical path) while the walk runs; an entry
    // renamed meanwhile can only lose its grant, never move it outside the tree.
    run(['-P', '-R', '-m', `${u}:rwX,d:${u}:rwX,d:u:${owner}:rwX`, '--', real]);
  }
}

function othersCanSearch(dir: string): boolean {
  try {
    return (statSync(dir).mode & 0o001) !== 0;
  } catch {
    return true; // missing: nothing to grant
  }
}

/**
 * True when `identity` can certainly not reach `path` by DAC: some directory
 * above it is not the identity's and has neither the group-class nor the
 * other search bit (with POSIX ACLs the group-class bits are the mask, so
 * no ACL entry can grant search either). Such a path needs no cover in the
 * sandbox (the kernel refuses it anyway), and bwrap, running as the
 * identity, could not create the cover.
 */
export function unreachableBy(identity: { readonly uid: number }, path: string): boolean {
  for (let dir = dirname(path); dir !== dirname(dir); dir = dirname(dir)) {
    try {
      const stat = statSync(dir);
      if (stat.uid !== identity.uid && (stat.mode & 0o011) === 0) return true;
    } catch {
      return false;
    }
  }
  return false;
}
