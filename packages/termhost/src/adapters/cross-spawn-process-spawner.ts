import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { spawn } from 'cross-spawn';
import type { ProcessExit, ProcessSpawner, SpawnedProcess, SpawnRequest } from '../ports/process-spawner.js';
import { processGroupAlive, signalProcessGroup } from './posix-process-group.js';
import { type UnixSocketPair, unixSocketPair } from './unix-socket-pair.js';

/**
 * Spawns with `cross-spawn` (plain `child_process.spawn` on POSIX), detached so
 * that the child calls `setsid()`: its own session and process group, no
 * controlling terminal. Its stdout and stderr are one socket
 * ({@link unixSocketPair}; Node's own `'pipe'` descriptors are sockets too),
 * so its output arrives in the order it was written. POSIX only: process
 * groups have no Windows equivalent here.
 */
export class CrossSpawnProcessSpawner implements ProcessSpawner {
  /** Socket pairs made by `prepare`, one for each spawn that must fork synchronously. */
  readonly #prepared: UnixSocketPair[] = [];

  async prepare(): Promise<void> {
    this.#prepared.push(await unixSocketPair());
  }

  async spawn(request: SpawnRequest): Promise<SpawnedProcess> {
    if (request.sandbox !== undefined) {
      throw Object.assign(new Error('this spawner cannot enforce a sandbox profile'), { code: 'ESANDBOX' });
    }
    if (request.argv[0] === undefined) throw Object.assign(new Error('empty argv'), { code: 'EINVAL' });
    // With a prepared pair nothing is awaited before the fork (see ProcessSpawner.prepare).
    const output = this.#prepared.shift() ?? (await unixSocketPair());
    try {
      return await start(request, output);
    } finally {
      // The child holds its own copies; the parent keeps only the reading end.
      output.child.destroy();
    }
  }
}

function start(request: SpawnRequest, output: UnixSocketPair): Promise<SpawnedProcess> {
  return new Promise((resolve, reject) => {
    const [program, ...args] = request.argv as [string, ...string[]];
    let child: ChildProcess;
    try {
      child = spawn(program, args, {
        cwd: request.cwd,
        env: request.env,
        detached: true,
        stdio: ['ignore', output.child, output.child, ...(request.extraFds ?? [])],
        windowsHide: true,
      });
    } catch (error) {
      output.parent.destroy();
      reject(error);
      return;
    }
    const onError = (error: Error): void => {
      child.off('spawn', onSpawn);
      output.parent.destroy();
      reject(error);
    };
    const onSpawn = (): void => {
      child.off('error', onError);
      resolve(new ChildProcessGroup(child, output.parent));
    };
    child.once('error', onError);
    child.once('spawn', onSpawn);
  });
}

class ChildProcessGroup implements SpawnedProcess {
  readonly pid: number;
  readonly output: Readable;
  readonly exited: Promise<ProcessExit>;
  #gone = false;

  constructor(child: ChildProcess, output: Readable) {
    this.pid = child.pid ?? 0;
    this.output = output;
    this.exited = new Promise((resolve) => {
      child.once('exit', (exitCode, signal) => resolve({ exitCode, signal }));
    });
    // Later errors (a failed child.kill, say) must not become uncaught exceptions.
    child.on('error', () => {});
  }

  signalGroup(signal: 'SIGTERM' | 'SIGKILL'): boolean {
    if (this.#gone) return false;
    const probe = signalProcessGroup(this.pid, signal);
    if (probe === 'gone') this.#gone = true;
    return probe === 'alive';
  }

  groupAlive(): boolean {
    if (this.#gone) return false;
    if (!processGroupAlive(this.pid)) this.#gone = true;
    return !this.#gone;
  }
}
