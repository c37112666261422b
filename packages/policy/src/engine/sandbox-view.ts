import { lstatSync, readdirSync, readlinkSync } from 'node:fs';
import { isAbsolute, posix } from 'node:path';
import { isInside } from '../policy-file/policy-paths.js';
import type { LoadedPolicy } from '../policy-file/policy-types.js';

/** Symlinks followed per path before giving up (Linux stops at 40 too). */
const MAX_LINKS = 40;

/**
 * The filesystem as a judged command will see it, for resolving the paths
 * it names. With the sandbox on, the command's mounts (see
 * `bubblewrapArguments`) hide parts of the host: its private `/tmp` starts
 * empty for every command, and each hidden path is an empty directory (or
 * `/dev/null`); the writable roots bound over `/tmp` show the host's
 * content. A symlink on the host inside one of those empty places (a
 * planted `/tmp/x` → `.npmrc`) is not what the command opens, so it must
 * not steer a verdict: below them nothing exists, and paths are taken as
 * written. `/dev` and `/proc` are the command's own (a new devtmpfs and
 * procfs) and are taken as written too. Everywhere else the host's view is
 * the command's (`/` is bound read-only at the same path, the writable
 * roots at theirs, the cwd and `~` are the same paths).
 */
export class SandboxView {
  /** The host as it is: no mount hides anything (the sandbox is off). */
  static readonly HOST = new SandboxView([], []);

  /**
   * @param empty mount points whose content the command does not see (`/tmp`, hidden paths)
   * @param shown mount points of host content bound inside an empty one (writable roots under `/tmp`)
   */
  constructor(
    private readonly empty: readonly string[],
    private readonly shown: readonly string[],
  ) {}

  static of(policy: LoadedPolicy): SandboxView {
    const { sandbox } = policy;
    if (sandbox.mode !== 'required') return SandboxView.HOST;
    const empty = [...(sandbox.privateTmp ? ['/tmp'] : []), ...sandbox.hidden];
    return new SandboxView(empty, [...sandbox.writable, ...sandbox.readOnly]);
  }

  /**
   * The path the command opens for `path` (absolute): every symlink the
   * command would see followed (the last one too, dangling or not), `..`
   * taken after the symlink before it; below the deepest existing directory
   * (or inside an empty place) the rest is appended as written. `exists`
   * says whether the whole path exists in the command's view.
   */
  resolve(path: string): { path: string; exists: boolean } {
    let done = '/';
    const queue = path.split('/');
    let hops = 0;
    while (queue.length > 0) {
      const part = queue.shift()!;
      if (part === '' || part === '.') continue;
      if (part === '..') {
        done = posix.dirname(done);
        continue;
      }
      const next = posix.join(done, part);
      if (this.hiddenBelow(next) && this.shown.some((m) => m !== next && isInside(m, next))) {
        done = next; // a directory bwrap made to mount host content below it
        continue;
      }
      if (this.asWritten(next) || this.hiddenBelow(next)) {
        return { path: posix.join(next, ...queue), exists: false };
      }
      if (this.empty.includes(next) && !this.shown.includes(next)) {
        done = next; // the mount point itself: an empty directory
        continue;
      }
      let link: string | null;
      try {
        const stat = lstatSync(next, { throwIfNoEntry: false });
        if (stat === undefined) return { path: posix.join(next, ...queue), exists: false };
        link = stat.isSymbolicLink() ? readlinkSync(next) : null;
      } catch {
        return { path: posix.join(next, ...queue), exists: false };
      }
      if (link === null) {
        done = next;
        continue;
      }
      if (++hops > MAX_LINKS) return { path: posix.resolve(path), exists: false };
      queue.unshift(...link.split('/'));
      if (isAbsolute(link)) done = '/';
    }
    return { path: done, exists: true };
  }

  /** Names in directory `dir` as the command sees them (empty inside an empty place); null when unreadable. */
  readdir(dir: string): string[] | null {
    if (
      this.hiddenBelow(dir) ||
      this.asWritten(dir) ||
      (this.empty.includes(dir) && !this.shown.includes(dir))
    )
      return [];
    try {
      return readdirSync(dir);
    } catch {
      return null;
    }
  }

  /** `/dev`, `/proc` and below: the command's own, taken as written. */
  private asWritten(path: string): boolean {
    return /^\/(dev|proc)(\/|$)/.test(path);
  }

  /** Strictly below an empty mount point, and not inside host content bound there. */
  private hiddenBelow(path: string): boolean {
    // The innermost mount containing the path decides; host binds are mounted after /tmp, hidden paths last.
    const hidden = this.empty.some((m) => m !== '/tmp' && path !== m && isInside(path, m));
    if (hidden) return true;
    if (!this.empty.includes('/tmp') || path === '/tmp' || !isInside(path, '/tmp')) return false;
    return !this.shown.some((m) => isInside(path, m));
  }
}
