import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeServerCgroupRoot, tryRmdir } from './cgroup-root.js';

/** What one terminal's cgroup bounds: the total of its whole process tree. */
export interface TerminalCgroupLimits {
  /** Every page charged to the tree: anonymous, shared (MAP_SHARED, memfd), tmpfs and page cache. */
  readonly memoryBytes: number;
  /** Processes and threads. */
  readonly pids: number;
}

/** One terminal's cgroup: the directories a process joins (one per hierarchy). */
export interface TerminalCgroup {
  readonly directories: readonly string[];
  /** Removes the directories once empty, retrying for a while (the last tasks may still be exiting). */
  remove(): void;
}

/**
 * Per-terminal memory and pids limits by cgroup, below the cgroups this
 * process runs in:
 *
 * - cgroup v2, when its `memory` and `pids` controllers are enabled for our
 *   cgroup (delegated, or we are root in the root cgroup): one directory,
 *   `memory.max` (and `memory.swap.max` 0) and `pids.max`;
 * - else the cgroup v1 `memory` and `pids` hierarchies, when we may create
 *   cgroups there (root on a hybrid host): `memory.limit_in_bytes` (and
 *   `memory.memsw.limit_in_bytes` when swap is accounted) and `pids.max`;
 * - else `null`: the caller falls back to rlimits.
 *
 * The server never joins these cgroups: a process joins its own before it
 * executes the command (see `perl-launcher.ts`). The kernel charges every
 * page the tree touches, shared memory included, so a terminal over its
 * memory limit is reclaimed and then OOM-killed inside its cgroup; a fork
 * beyond `pids` fails with EAGAIN. Directories are removed when found
 * empty, when this process exits, and (left by a killed server) at the next start.
 */
export class TerminalCgroups {
  private constructor(
    readonly version: 'v1' | 'v2',
    /** memory and pids roots (the same directory for v2). */
    private readonly roots: { readonly memory: string; readonly pids: string },
  ) {}

  /** The strongest kind available here, or `null`. */
  static detect(): TerminalCgroups | null {
    return TerminalCgroups.#v2() ?? TerminalCgroups.#v1();
  }

  /** Creates a terminal's cgroup with `limits`; throws when the kernel refuses. */
  create(limits: TerminalCgroupLimits): TerminalCgroup {
    const name = `t-${randomUUID()}`;
    const made: string[] = [];
    const cgroup: TerminalCgroup = {
      directories: made,
      remove: () => removeLater(made),
    };
    try {
      const memory = join(this.roots.memory, name);
      mkdirSync(memory);
      made.push(memory);
      const bytes = String(limits.memoryBytes);
      if (this.version === 'v2') {
        writeFileSync(join(memory, 'memory.max'), bytes);
        writeOptional(join(memory, 'memory.swap.max'), '0');
        writeFileSync(join(memory, 'pids.max'), String(limits.pids));
        return cgroup;
      }
      writeFileSync(join(memory, 'memory.limit_in_bytes'), bytes);
      // memsw is memory + swap: the same figure leaves no swap beyond the limit.
      writeOptional(join(memory, 'memory.memsw.limit_in_bytes'), bytes);
      const pids = join(this.roots.pids, name);
      mkdirSync(pids);
      made.push(pids);
      writeFileSync(join(pids, 'pids.max'), String(limits.pids));
      return cgroup;
    } catch (error) {
      for (const dir of made) tryRmdir(dir);
      throw error;
    }
  }

  /**
   * Limits the memory of all terminals together: the root that holds their
   * cgroups (charges of a removed child cgroup stay in its parent, so what a
   * terminal that ended left charged counts too). Throws when the kernel refuses.
   */
  capTotal(bytes: number): void {
    const value = String(Math.floor(bytes));
    if (this.version === 'v2') {
      writeFileSync(join(this.roots.memory, 'memory.max'), value);
      writeOptional(join(this.roots.memory, 'memory.swap.max'), '0');
      return;
    }
    writeFileSync(join(this.roots.memory, 'memory.limit_in_bytes'), value);
    writeOptional(join(this.roots.memory, 'memory.memsw.limit_in_bytes'), value);
  }

  /** The limits layer in words, for the server-start record. */
  describe(limits: TerminalCgroupLimits): string {
    const mib = Math.round(limits.memoryBytes / 1024 / 1024);
    return this.version === 'v2'
      ? `cgroup v2 per terminal: memory.max ${mib} MiB for the whole tree (shared memory and tmpfs included), pids.max ${limits.pids}`
      : `cgroup v1 per terminal: memory.limit_in_bytes ${mib} MiB for the whole tree (shared memory and tmpfs included), pids.max ${limits.pids}`;
  }

  static #v2(): TerminalCgroups | null {
    const own = ownCgroup('', 'cgroup2');
    if (own === null) return null;
    const wanted = ['memory', 'pids'];
    const enabled = (dir: string): boolean => {
      const on = readOr(join(dir, 'cgroup.subtree_control')).split(/\s+/);
      return wanted.every((c) => on.includes(c));
    };
    const available = readOr(join(own, 'cgroup.controllers')).split(/\s+/);
    if (!wanted.every((c) => available.includes(c))) return null;
    // Allowed only where our cgroup holds no process of its own (the root cgroup, a delegated parent).
    if (!enabled(own)) writeOptional(join(own, 'cgroup.subtree_control'), '+memory +pids');
    if (!enabled(own)) return null;
    const root = makeServerCgroupRoot(own);
    if (root === null) return null;
    writeOptional(join(root, 'cgroup.subtree_control'), '+memory +pids');
    if (!enabled(root)) {
      tryRmdir(root);
      return null;
    }
    return new TerminalCgroups('v2', { memory: root, pids: root });
  }

  static #v1(): TerminalCgroups | null {
    const memoryOwn = ownCgroup('memory', 'cgroup');
    const pidsOwn = ownCgroup('pids', 'cgroup');
    if (memoryOwn === null || pidsOwn === null) return null;
    const memory = makeServerCgroupRoot(memoryOwn);
    if (memory === null) return null;
    const pids = makeServerCgroupRoot(pidsOwn);
    if (pids === null) {
      tryRmdir(memory);
      return null;
    }
    return new TerminalCgroups('v1', { memory, pids });
  }
}

/**
 * Our cgroup's directory in the hierarchy of `controller` (`''`: the cgroup
 * v2 one) mounted with `fstype`, or `null`.
 */
function ownCgroup(controller: string, fstype: 'cgroup' | 'cgroup2'): string | null {
  try {
    const entry = readFileSync('/proc/self/cgroup', 'utf8')
      .split('\n')
      .map((line) => /^(\d+):([^:]*):(.*)$/.exec(line))
      .find(
        (m) => m !== null && (fstype === 'cgroup2' ? m[1] === '0' : m[2]!.split(',').includes(controller)),
      );
    if (entry === undefined || entry === null) return null;
    const path = entry[3]!;
    const mount = readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .map((line) => line.split(' '))
      .find((f) => {
        const dash = f.indexOf('-');
        if (f[dash + 1] !== fstype) return false;
        return fstype === 'cgroup2' || (f[dash + 3] ?? '').split(',').includes(controller);
      });
    if (mount === undefined) return null;
    const [mountRoot, mountPoint] = [mount[3]!, mount[4]!];
    if (mountRoot !== '/' && path !== mountRoot && !path.startsWith(`${mountRoot}/`)) return null;
    const dir = join(mountPoint, mountRoot === '/' ? path : path.slice(mountRoot.length));
    return existsSync(join(dir, 'cgroup.procs')) ? dir : null;
  } catch {
    return null;
  }
}

/** rmdir each directory; those still busy (tasks exiting) are retried for about 5 s, off the event loop's way. */
function removeLater(dirs: readonly string[], attempt = 0): void {
  const left = dirs.filter((dir) => !tryRmdir(dir));
  if (left.length === 0 || attempt >= 50) return;
  setTimeout(() => removeLater(left, attempt + 1), 100).unref();
}

function writeOptional(file: string, text: string): void {
  try {
    writeFileSync(file, text);
  } catch {
    // not supported here (no swap accounting, say), or refused: checked by the caller where it matters
  }
}

function readOr(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return '';
  }
}
