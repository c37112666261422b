import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { SandboxProfile } from '@termgate/termhost';
import type { SandboxPolicy } from '../policy-file/policy-types.js';
import type { SandboxProfileSource } from '../ports/sandbox-profile-source.js';
import type { SandboxProfilerOptions } from '../sandbox/sandbox-profiler.js';
import { SOURCE_ROOT } from '../shell/module-location.js';
import type { FromProfiler, ToProfiler } from './profiler-worker-protocol.js';

/** Longest wait for one profile by default: well above a `git config` run's own 3 s bound. */
export const DEFAULT_PROFILE_TIMEOUT_MS = 10_000;

export interface WorkerThreadSandboxProfilerOptions extends SandboxProfilerOptions {
  /** Longest wait for one profile, in ms; past it the create is refused and the thread replaced. */
  readonly timeoutMs?: number;
  /** The thread's script; default `adapters/profiler-worker.js` next to this module (tests point at `dist`). */
  readonly workerPath?: string;
}

interface Pending {
  readonly resolve: (profile: SandboxProfile) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

/**
 * `SandboxProfiler` in a worker thread: the same profile, computed fresh for
 * every call (nothing is cached: git dirs, the run-later set, host sockets
 * and the protected paths' symlinks can all change between two commands),
 * but its file-system reads and `git config` runs block the thread, not the
 * server's event loop, so a workspace full of directories stalls no other
 * request, and the profile is computed while the judge's thread judges.
 *
 * Contract: `profile` resolves with what `SandboxProfiler.profile` returns
 * for the same inputs, or rejects (its error, a timeout, a thread that
 * died): the gate then refuses the create. A timed-out or dead thread is
 * replaced on the next call. `close` ends the thread and rejects what is
 * pending. The thread starts with the profiler and never keeps the process alive.
 */
export class WorkerThreadSandboxProfiler implements SandboxProfileSource {
  readonly #policy: SandboxPolicy;
  readonly #options: SandboxProfilerOptions;
  readonly #timeoutMs: number;
  readonly #workerPath: string;
  readonly #pending = new Map<number, Pending>();
  #worker: Worker | null = null;
  #nextId = 1;
  #closed = false;

  constructor(policy: SandboxPolicy, options: WorkerThreadSandboxProfilerOptions) {
    this.#policy = policy;
    this.#options = options;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_PROFILE_TIMEOUT_MS;
    this.#workerPath = options.workerPath ?? join(SOURCE_ROOT, 'adapters', 'profiler-worker.js');
    if (!existsSync(this.#workerPath)) {
      throw new Error(
        `the sandbox profiler's worker ${this.#workerPath} does not exist (is @termgate/policy built?)`,
      );
    }
    // Started now, not at the first create: loading its modules is not the first command's wait.
    this.#thread();
  }

  get enabled(): boolean {
    return this.#policy.mode === 'required';
  }

  profile(cwd: string): Promise<SandboxProfile> {
    if (this.#closed) return Promise.reject(new Error('the sandbox profiler is closed'));
    return new Promise((resolve, reject) => {
      const id = this.#nextId++;
      const worker = this.#thread();
      const timer = setTimeout(() => {
        this.#fail(worker, new Error(`it took longer than ${this.#timeoutMs} ms`));
      }, this.#timeoutMs);
      this.#pending.set(id, { resolve, reject, timer });
      // Read now, in this thread: the paths change when the trail rotates.
      const { readOnly, hidden } = this.#options.protect;
      const message: ToProfiler = { id, cwd, protect: { readOnly: [...readOnly], hidden: [...hidden] } };
      try {
        worker.postMessage(message);
      } catch (error) {
        this.#settle(id, error instanceof Error ? error : new Error(String(error)));
      }
    });
  }

  /** Ends the thread; pending and later calls reject. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    const worker = this.#worker;
    this.#worker = null;
    for (const id of [...this.#pending.keys()])
      this.#settle(id, new Error('the sandbox profiler was closed'));
    if (worker !== null) await worker.terminate().catch(() => {});
  }

  #thread(): Worker {
    if (this.#worker !== null) return this.#worker;
    const worker = new Worker(this.#workerPath, {
      workerData: { policy: this.#policy, privateTmp: this.#options.privateTmp },
      env: { ...process.env },
      execArgv: [],
      argv: [],
      stdout: true,
    });
    worker.stdout.resume();
    worker.on('message', (answer: FromProfiler) => {
      this.#settle(answer.id, 'error' in answer ? new Error(answer.error) : answer.profile);
    });
    worker.on('error', (error) => this.#fail(worker, error));
    worker.on('exit', (code) => this.#fail(worker, new Error(`its thread exited with code ${code}`)));
    worker.unref();
    this.#worker = worker;
    return worker;
  }

  /** A thread that hung or died: every pending profile fails, and the next call starts another thread. */
  #fail(worker: Worker, why: Error): void {
    if (this.#worker !== worker) return;
    this.#worker = null;
    void worker.terminate().catch(() => {});
    for (const id of [...this.#pending.keys()]) {
      this.#settle(id, new Error(`the sandbox profiler failed (${why.message})`));
    }
  }

  #settle(id: number, outcome: SandboxProfile | Error): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    this.#pending.delete(id);
    clearTimeout(pending.timer);
    if (outcome instanceof Error) pending.reject(outcome);
    else pending.resolve(outcome);
  }
}
