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
import { assertExecutable } from './executable-check.js';

/**
 * Run by `/bin/sh` before the command: moves the shell itself into the
 * terminal's cgroup (`echo 0` moves the writer), then execs the command, so
 * the command and everything it ever starts are born in the cgroup. A move
 * that fails stops here with 126: nothing runs outside its cgroup.
 */
const ENTER =
  'echo 0 > "$1" || { echo "termgate: cannot enter the terminal cgroup" >&2; exit 126; }; shift; exec "$@"';

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
    const root = join(own, `termgate-${process.pid}`);
    mkdirSync(root);
    process.once('exit', () => {
      try {
        rmdirSync(root);
      } catch {
        // not empty or already gone
      }
    });
    return root;
  } catch {
    return null;
  }
}

/** The directory of this process's cgroup v2 (from /proc/self/cgroup and the cgroup2 mount), or `null`. */
function ownCgroupDirectory(): string | null {
  try {
    const line = readFileSync('/proc/self/cgroup', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('0::'));
    if (line === undefined) return null;
    const mount = readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .map((l) => l.split(' '))
      .find((fields) => fields[fields.indexOf('-') + 1] === 'cgroup2');
    if (mount === undefined || mount[4] === undefined) return null;
    const dir = join(mount[4], line.slice(3));
    return existsSync(join(dir, 'cgroup.procs')) ? dir : null;
  } catch {
    return null;
  }
}

/**
 * A {@link ProcessSpawner} that gives every command its own cgroup v2,
 * created below `root` (see {@link createTerminalCgroupRoot}). A process
 * can leave its session and process group (`setsid`, a detached child, a
 * double fork) but not its cgroup: signals go to the process group **and**
 * to every process of the cgroup (SIGKILL through `cgroup.kill`, atomic
 * against forks), and the group counts as alive while the cgroup is
 * populated. The cgroup is removed once empty.
 *
 * Contract: as the wrapped spawner's. The program is checked first
 * (`ENOENT`/`EACCES` as exec would report them), since it is started by
 * `/bin/sh` once that joined the cgroup.
 */
export class CgroupProcessSpawner implements ProcessSpawner {
  #next = 0;

  constructor(
    private readonly inner: ProcessSpawner,
    private readonly root: string,
  ) {}

  async spawn(request: SpawnRequest): Promise<SpawnedProcess> {
    assertExecutable(request);
    this.#next += 1;
    const dir = join(this.root, `t${this.#next}`);
    mkdirSync(dir);
    try {
      const child = await this.inner.spawn({
        ...request,
        argv: ['/bin/sh', '-c', ENTER, 'termgate-cgroup', join(dir, 'cgroup.procs'), ...request.argv],
      });
      return new CgroupProcess(child, dir);
    } catch (error) {
      removeCgroup(dir);
      throw error;
    }
  }
}

class CgroupProcess implements SpawnedProcess {
  readonly pid: number;
  readonly stdout: SpawnedProcess['stdout'];
  readonly stderr: SpawnedProcess['stderr'];
  readonly exited: SpawnedProcess['exited'];
  #removed = false;

  constructor(
    private readonly group: SpawnedProcess,
    private readonly dir: string,
  ) {
    this.pid = group.pid;
    this.stdout = group.stdout;
    this.stderr = group.stderr;
    this.exited = group.exited;
  }

  signalGroup(signal: 'SIGTERM' | 'SIGKILL'): boolean {
    const inGroup = this.group.signalGroup(signal);
    if (this.#removed) return inGroup;
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

  groupAlive(): boolean {
    const alive = this.group.groupAlive() || this.populated();
    if (!alive && !this.#removed) {
      this.#removed = true;
      removeCgroup(this.dir);
    }
    return alive;
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

function removeCgroup(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // still populated (it is removed when found empty) or gone
  }
}
