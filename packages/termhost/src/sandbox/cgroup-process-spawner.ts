import { randomUUID } from 'node:crypto';
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  readFileSync,
  rmdirSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type { ProcessSpawner, SpawnedProcess, SpawnRequest } from '../ports/process-spawner.js';
import { makeServerCgroupRoot, tryRmdir } from './cgroup-root.js';
import { assertExecutable } from './executable-check.js';
import { launch } from './perl-launcher.js';

/**
 * Creates a cgroup v2 directory for this server's terminals, below the
 * cgroup this process runs in, when that is possible: a cgroup2 mount, our
 * cgroup writable (root, or a cgroup delegated to the user). Returns its
 * path, or `null`; the directory is removed when this process exits (once
 * empty, which `closeAll` ensures).
 */
export function createTerminalCgroupRoot(): string | null {
  const own = ownCgroupDirectory();
  if (own === null) return null;
  try {
    accessSync(join(own, 'cgroup.procs'), constants.W_OK);
  } catch {
    return null;
  }
  return makeServerCgroupRoot(own);
}

/** Where this process's cgroup v2 is: the cgroup2 mount point and our directory below it; `null` without one. */
function cgroupLocation(): { mount: string; own: string } | null {
  try {
    const line = readFileSync('/proc/self/cgroup', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('0::'));
    if (line === undefined) return null;
    const fields = readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .map((l) => l.split(' '))
      .find((f) => f[f.indexOf('-') + 1] === 'cgroup2');
    const mount = fields?.[4];
    if (mount === undefined) return null;
    const own = join(mount, line.slice(3));
    return existsSync(join(own, 'cgroup.procs')) ? { mount, own } : null;
  } catch {
    return null;
  }
}

function ownCgroupDirectory(): string | null {
  return cgroupLocation()?.own ?? null;
}

/** How a command joins its cgroup: the launcher (`perl-launcher.ts`) and what else it does first. */
export interface CgroupLauncher {
  /** Absolute path of `perl`. */
  readonly perl: string;
  /** Drop CAP_SYS_PTRACE too (a server running as root; see `SetprivProcessSpawner` for why). */
  readonly dropPtrace: boolean;
}

/**
 * A {@link ProcessSpawner} that gives every command its own cgroup v2,
 * created below `root` (see {@link createTerminalCgroupRoot}). A process
 * can leave its session and process group (`setsid`, a detached child, a
 * double fork) but not its cgroup, unless it may write another cgroup's
 * `cgroup.procs` (root, or the owner of a delegated cgroup: this tracks, it
 * does not confine): signals go to the process group **and**
 * to every process of the cgroup (SIGKILL through `cgroup.kill`, atomic
 * against forks), and the group counts as alive while the cgroup is
 * populated. The cgroup is removed once empty.
 *
 * How a command is born in its cgroup: the child joins it itself. The
 * wrapped spawner starts the launcher (`perl-launcher.ts`), which writes its
 * own pid to the cgroup's `cgroup.procs` (and, as root, drops
 * CAP_SYS_PTRACE) before it executes the command; if that fails, it exits
 * 125 with a `termgate:` message and the command never runs. This process
 * never changes cgroup, so nothing blocks its event loop and a wrapped
 * spawner may fork whenever it likes. Until the launcher joined, it is the
 * leader of the command's process group, which every signal reaches too.
 *
 * Contract: as the wrapped spawner's, with the program checked first (found
 * on the request's PATH, executable), so a missing program still rejects
 * with `ENOENT` (or `EACCES`) instead of becoming the launcher's exit code 127.
 */
export class CgroupProcessSpawner implements ProcessSpawner {
  constructor(
    private readonly inner: ProcessSpawner,
    private readonly root: string,
    private readonly launcher: CgroupLauncher,
  ) {
    if (cgroupLocation() === null) throw new Error('no cgroup v2 for this process');
  }

  async spawn(request: SpawnRequest): Promise<SpawnedProcess> {
    assertExecutable(request);
    const dir = join(this.root, `t-${randomUUID()}`);
    mkdirSync(dir);
    let child: SpawnedProcess;
    try {
      const launched = launch(
        this.launcher.perl,
        { cgroups: [dir], dropPtrace: this.launcher.dropPtrace },
        request.argv,
        request.env,
      );
      child = await this.inner.spawn({ ...request, argv: launched.argv, env: launched.env });
    } catch (error) {
      tryRmdir(dir);
      throw error;
    }
    return new CgroupProcess(child, dir);
  }
}

class CgroupProcess implements SpawnedProcess {
  readonly pid: number;
  readonly output: SpawnedProcess['output'];
  readonly exited: SpawnedProcess['exited'];
  #removed = false;

  constructor(
    private readonly group: SpawnedProcess,
    private readonly dir: string,
  ) {
    this.pid = group.pid;
    this.output = group.output;
    this.exited = group.exited;
  }

  signalGroup(signal: 'SIGTERM' | 'SIGKILL'): boolean {
    const inGroup = this.group.signalGroup(signal);
    if (this.#removed) return inGroup;
    if (!inGroup && !this.populated()) return !this.#tryRemove();
    if (signal === 'SIGKILL' && existsSync(join(this.dir, 'cgroup.kill'))) {
      tryWrite(join(this.dir, 'cgroup.kill'), '1');
    } else {
      for (const pid of this.members()) {
        try {
          process.kill(pid, signal);
        } catch {
          // exited meanwhile
        }
      }
    }
    return inGroup || this.populated();
  }

  /**
   * Alive while the process group or the cgroup has a process, and until the
   * emptied cgroup is removed: a cgroup whose last tasks are still exiting
   * refuses rmdir (EBUSY) for a moment, and a release waits for it.
   */
  groupAlive(): boolean {
    if (this.group.groupAlive() || this.populated()) return true;
    return !this.#tryRemove();
  }

  /** True once the cgroup directory is gone. */
  #tryRemove(): boolean {
    if (this.#removed) return true;
    try {
      rmdirSync(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return false;
    }
    this.#removed = true;
    return true;
  }

  private populated(): boolean {
    if (this.#removed) return false;
    try {
      return /^populated 1$/m.test(readFileSync(join(this.dir, 'cgroup.events'), 'utf8'));
    } catch {
      return false;
    }
  }

  private members(): number[] {
    try {
      return readFileSync(join(this.dir, 'cgroup.procs'), 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map(Number);
    } catch {
      return [];
    }
  }
}

function tryWrite(file: string, text: string): void {
  try {
    writeFileSync(file, text);
  } catch {
    // the cgroup is gone
  }
}
