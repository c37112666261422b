import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  realpathSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';

/**
 * What a start's checks are keyed by: the policy text alone, or under a
 * managed layer both layers' paths and texts (the managed tests passed with
 * this workspace policy, not another; the examples of both were checked).
 * A layered key is a JSON array, which is never a valid policy text.
 */
export function policyChecksText(
  workspace: { readonly path: string; readonly text: string },
  managed: { readonly path: string; readonly text: string } | null,
): string {
  if (managed === null) return workspace.text;
  return JSON.stringify(['layers', managed.path, managed.text, workspace.path, workspace.text]);
}

/** The cache's directory inside the audit trail's directory (which the sandbox hides from every command). */
export const POLICY_CHECKS_DIRECTORY = '.policy-checks';

/**
 * Remembers which policy texts passed their start-up checks (the rules'
 * examples and the embedded tests), so that `serve` runs them once per
 * policy and termgate version instead of at every start.
 *
 * An entry is a file named by the key, sha256 of a domain tag, the termgate
 * version and the exact policy text, holding the key. It is trusted only
 * when the directory and the file are the server's own (owner = effective
 * uid), reachable without a symlink, and neither group- nor world-writable
 * (mode `& 0o077 === 0`); anything else is a miss and the checks run. The
 * directory lies in the audit trail's directory, which the sandbox hides
 * and keeps out of every writable root (`startSandbox` in
 * packages/termhost/src/sandbox/start-sandbox.ts refuses a trail inside
 * one), so no sandboxed command can plant an entry: the caller
 * consults the cache only when the sandbox is on. A miss never fails a
 * start; a cache that cannot be written is skipped.
 */
export class PolicyCheckCache {
  private constructor(
    private readonly dir: string,
    private readonly version: string,
  ) {}

  /** The cache in `auditDir` (created on the first `record`). */
  static in(auditDir: string, version: string): PolicyCheckCache {
    return new PolicyCheckCache(join(auditDir, POLICY_CHECKS_DIRECTORY), version);
  }

  /** The entry's name for `policyText`. */
  key(policyText: string): string {
    return createHash('sha256')
      .update(`termgate policy checks passed\0${this.version}\0`, 'utf8')
      .update(policyText, 'utf8')
      .digest('hex');
  }

  /** True only when a trusted entry says this exact text passed with this version. */
  passed(policyText: string): boolean {
    const key = this.key(policyText);
    if (!this.trustedDirectory()) return false;
    let fd: number;
    try {
      fd = openSync(join(this.dir, key), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch {
      return false;
    }
    try {
      if (!ownOnly(fstatSync(fd), 'file')) return false;
      const buffer = Buffer.alloc(key.length + 1);
      const length = readSync(fd, buffer, 0, buffer.length, 0);
      return buffer.subarray(0, length).toString('utf8') === key;
    } catch {
      return false;
    } finally {
      closeSync(fd);
    }
  }

  /** Records that `policyText` passed. Returns false (and records nothing) when the directory is not the server's own. */
  record(policyText: string): boolean {
    const key = this.key(policyText);
    // One level only: the trail's directory exists by now (the trail is open), and Node 20's
    // recursive mkdir never returns under /proc (`--audit /proc/nope/audit.jsonl` hung serve).
    try {
      mkdirSync(this.dir, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return false;
    }
    if (!this.trustedDirectory()) return false;
    const temporary = join(this.dir, `.${key}.${randomBytes(6).toString('hex')}`);
    try {
      const fd = openSync(
        temporary,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        0o600,
      );
      try {
        writeSync(fd, key);
      } finally {
        closeSync(fd);
      }
      renameSync(temporary, join(this.dir, key));
      return true;
    } catch {
      rmSync(temporary, { force: true });
      return false;
    }
  }

  private trustedDirectory(): boolean {
    try {
      return realpathSync(this.dir) === this.dir && ownOnly(lstatSync(this.dir), 'directory');
    } catch {
      return false;
    }
  }
}

function ownOnly(stat: import('node:fs').Stats, kind: 'file' | 'directory'): boolean {
  const euid = process.geteuid?.() ?? -1;
  return (
    (kind === 'file' ? stat.isFile() : stat.isDirectory()) && stat.uid === euid && (stat.mode & 0o077) === 0
  );
}
