import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { spawn } from 'cross-spawn';
import type { ProcessExit, ProcessSpawner, SpawnedProcess, SpawnRequest } from '../ports/process-spawner.js';
import { processGroupAlive, signalProcessGroup } from './posix-process-group.js';

/**
 * Spawns with `cross-spawn` (plain `child_process.spawn` on POSIX), detached so
 * that the child calls `setsid()`: its own session and process group, no
 * controlling terminal. POSIX only: process groups have no Windows equivalent here.
 */
export class CrossSpawnProcessSpawner implements ProcessSpawner {
  spawn(request: SpawnRequest): Promise<SpawnedProcess> {
    return new Promise((resolve, reject) => {
      if (request.sandbox !== undefined) {
        reject(
          Object.assign(new Error('this spawner cannot enforce a sandbox profile'), { code: 'ESANDBOX' }),
        );
        return;
      }
      const [program, ...args] = request.argv;
      let child: ChildProcess;
      try {
        if (program === undefined) throw Object.assign(new Error('empty argv'), { code: 'EINVAL' });
        child = spawn(program, args, {
          cwd: request.cwd,
          env: request.env,
          detached: true,
          stdio: ['ignore', 'pipe', 'pipe', ...(request.extraFds ?? [])],
          windowsHide: true,
        });
      } catch (error) {
        reject(error);
        return;
      }
      const onError = (error: Error): void => {
        child.off('spawn', onSpawn);
        child.stdout?.destroy();
        child.stderr?.destroy();
        reject(error);
      };
      const onSpawn = (): void => {
        child.off('error', onError);
        resolve(new ChildProcessGroup(child));
      };
      child.once('error', onError);
      child.once('spawn', onSpawn);
    });
  }
}

class ChildProcessGroup implements SpawnedProcess {
  readonly pid: number;
  readonly stdout: Readable;
  readonly stderr: Readable;
  readonly exited: Promise<ProcessExit>;
  #gone = false;

  constructor(child: ChildProcess) {
    this.pid = child.pid ?? 0;
    this.stdout = child.stdout!;
    this.stderr = child.stderr!;
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
