import { createHash, type Hash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { OutputTail } from './output-tail.js';
import type { ProcessExit, SpawnedProcess } from './ports/process-spawner.js';
import type { WaitOptions } from './ports/terminal-host.js';
import { type TerminalOwner, terminalOwner } from './terminal-owner.js';
import type {
  CallerContext,
  ExitStatus,
  ResolvedTerminalSpec,
  TerminalId,
  TerminalOutput,
} from './terminal-spec.js';

/**
 * How long a terminal waits, after its leader exited, for its output pipe to
 * end before it counts as exited anyway. Background jobs that inherited the
 * pipe would otherwise hold every wait open for as long as they run.
 */
export const EXIT_DRAIN_GRACE_MS = 250;

/** How long to wait for a SIGKILLed group to disappear before reporting it and giving up. */
const SIGKILL_SETTLE_MS = 5000;
const MAX_POLL_MS = 50;

/** @internal What a terminal reports when it counts as exited. */
export interface TerminalExitReport {
  readonly exitStatus: ExitStatus;
  readonly durationMs: number;
  readonly totalBytes: number;
  readonly droppedBytes: number;
  readonly outputSha256: string | null;
}

/** @internal */
export interface ProcessTerminalInit {
  readonly id: TerminalId;
  readonly spec: ResolvedTerminalSpec;
  readonly caller: CallerContext;
  readonly process: SpawnedProcess;
  readonly killGraceMs: number;
  readonly digestOutput: boolean;
  readonly onExited: (terminal: ProcessTerminal, report: TerminalExitReport) => void;
  readonly onError: (error: unknown, context: string) => void;
}

type OutputListener = (chunk: Uint8Array, totalBytes: number) => void;

/**
 * @internal One spawned command: its bytes, its exit and its process group.
 *
 * Exited means: the leader's exit status is known **and** the output pipe
 * ended, or {@link EXIT_DRAIN_GRACE_MS} passed since the leader exited. Bytes
 * arriving later (from background jobs) are still retained and counted, but
 * are not in the exit report nor seen by waits.
 */
export class ProcessTerminal {
  readonly id: TerminalId;
  readonly spec: ResolvedTerminalSpec;
  readonly caller: CallerContext;
  readonly scope: string;
  /** Who it belongs to (`terminal-owner.ts`): what lookups and the per-principal limits compare. */
  readonly owner: TerminalOwner;
  readonly pid: number;
  /** @internal The host's use counter at the last verb on this terminal: what reclaiming orders by. */
  lastUsed = 0;
  readonly #process: SpawnedProcess;
  readonly #init: ProcessTerminalInit;
  readonly #tail: OutputTail;
  #hash: Hash | null;
  readonly #listeners = new Set<OutputListener>();
  readonly #waiters = new Set<(status: ExitStatus) => void>();
  readonly #startedAt = performance.now();
  #leader: ProcessExit | null = null;
  #durationMs = 0;
  #outputOpen = true;
  #status: ExitStatus | null = null;
  #timedOut = false;
  #killing: Promise<void> | null = null;
  #drainTimer: NodeJS.Timeout | undefined;
  #timeoutTimer: NodeJS.Timeout | undefined;
  readonly #settled: Promise<ExitStatus>;
  #resolveSettled!: (status: ExitStatus) => void;

  constructor(init: ProcessTerminalInit) {
    this.#init = init;
    this.id = init.id;
    this.spec = init.spec;
    this.caller = init.caller;
    this.scope = init.caller.scope ?? '';
    this.owner = terminalOwner(init.caller);
    this.#process = init.process;
    this.pid = init.process.pid;
    this.#tail = new OutputTail(init.spec.outputByteLimit);
    this.#hash = init.digestOutput ? createHash('sha256') : null;
    this.#settled = new Promise((resolve) => {
      this.#resolveSettled = resolve;
    });

    const onData = (chunk: Buffer): void => this.#onData(chunk);
    const onClose = (): void => this.#onStreamClosed();
    const stream = init.process.output;
    stream.on('data', onData);
    stream.once('close', onClose);
    stream.on('error', () => {}); // 'close' follows; a broken pipe is just the end of output
    void init.process.exited.then((exit) => this.#onLeaderExit(exit));

    const timeoutMs = init.spec.timeoutMs;
    if (timeoutMs !== undefined) {
      this.#timeoutTimer = setTimeout(() => {
        if (this.#leader !== null) return;
        this.#timedOut = true;
        void this.kill();
      }, timeoutMs);
      this.#timeoutTimer.unref();
    }
  }

  get exitStatus(): ExitStatus | null {
    return this.#status;
  }

  /** True while any process of the group runs (background jobs may outlive the exit). */
  groupAlive(): boolean {
    return this.#process.groupAlive();
  }

  /** See `TerminalHost.output`. */
  output(fromByte?: number): TerminalOutput {
    const { bytes, droppedBytes, offset } = this.#tail.snapshot(fromByte);
    return {
      output: bytes.toString('utf8'),
      offset,
      truncated: this.#tail.truncated,
      totalBytes: this.#tail.totalBytes,
      droppedBytes,
      exitStatus: this.#status,
    };
  }

  /** See `TerminalHost.waitForExit`. */
  wait(options: WaitOptions): Promise<ExitStatus> {
    if (this.#status !== null) return Promise.resolve(this.#status);
    const { signal, onOutput } = options;
    if (signal?.aborted) return Promise.reject(abortError(signal));
    return new Promise((resolve, reject) => {
      const listener: OutputListener | null =
        onOutput === undefined
          ? null
          : (chunk, totalBytes) => {
              try {
                onOutput(chunk, totalBytes);
              } catch (error) {
                this.#init.onError(error, `onOutput listener of terminal ${this.id}`);
              }
            };
      const cleanup = (): void => {
        if (listener !== null) this.#listeners.delete(listener);
        this.#waiters.delete(done);
        signal?.removeEventListener('abort', onAbort);
      };
      const done = (status: ExitStatus): void => {
        cleanup();
        resolve(status);
      };
      const onAbort = (): void => {
        cleanup();
        reject(abortError(signal!));
      };
      if (listener !== null) this.#listeners.add(listener);
      this.#waiters.add(done);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * SIGTERM to the group now, SIGKILL after the grace to whatever is left.
   * Resolves once the group is gone and the terminal counts as exited, so
   * that the next `output` shows the exit status; for a group that survives
   * SIGKILL, once the kill gave up (reported through `onError`). Concurrent
   * calls share one kill; a gone group is not signalled again.
   */
  kill(): Promise<void> {
    if (this.#killing === null) {
      this.#killing = this.#kill().finally(() => {
        this.#killing = null;
      });
    }
    return this.#killing;
  }

  /**
   * Kills whatever still runs in the group, waits until the group is gone and
   * the terminal exited, then closes the pipes and drops every listener.
   */
  async close(): Promise<void> {
    await this.kill();
    await this.#settled;
    clearTimeout(this.#timeoutTimer);
    clearTimeout(this.#drainTimer);
    this.#process.output.destroy();
    this.#listeners.clear();
  }

  async #kill(): Promise<void> {
    // After the leader exited, a zombie waiting for init (a sandbox's, say) still answers a group
    // signal: ask first whether anything runs, which does not count zombies.
    const running =
      (this.#leader === null || this.#process.groupAlive()) && this.#process.signalGroup('SIGTERM');
    if (running && !(await this.#escalate())) return;
    // The group is gone, the leader with it: its exit is reported as soon as the kernel
    // tells Node, and the output ends at once or after EXIT_DRAIN_GRACE_MS.
    if (this.#status !== null) return;
    const seen = await Promise.race([this.#settled.then(() => true), delay(SIGKILL_SETTLE_MS, false)]);
    if (!seen) {
      this.#init.onError(
        new Error(
          `process group ${this.pid} of terminal ${this.id} is gone, but its exit was not seen within ${SIGKILL_SETTLE_MS} ms`,
        ),
        'kill',
      );
    }
  }

  /** True once the group is gone: within the grace after SIGTERM, or after SIGKILL. */
  async #escalate(): Promise<boolean> {
    if (await this.#groupGoneWithin(this.#init.killGraceMs)) return true;
    this.#process.signalGroup('SIGKILL');
    if (await this.#groupGoneWithin(SIGKILL_SETTLE_MS)) return true;
    this.#init.onError(
      new Error(
        `process group ${this.pid} of terminal ${this.id} still runs ${SIGKILL_SETTLE_MS} ms after SIGKILL`,
      ),
      'kill',
    );
    return false;
  }

  async #groupGoneWithin(ms: number): Promise<boolean> {
    const deadline = performance.now() + ms;
    // Short first: a group usually ends within a few milliseconds of its leader (a sandbox tears down its namespace).
    let pause = 1;
    for (;;) {
      const left = deadline - performance.now();
      await delay(Math.max(0, Math.min(pause, left)));
      if (!this.#process.groupAlive()) return true;
      if (left <= pause) return false;
      pause = Math.min(pause * 2, MAX_POLL_MS);
    }
  }

  #onData(chunk: Buffer): void {
    this.#tail.append(chunk);
    this.#hash?.update(chunk);
    if (this.#listeners.size === 0) return;
    const total = this.#tail.totalBytes;
    for (const listener of this.#listeners) listener(chunk, total);
  }

  #onStreamClosed(): void {
    this.#outputOpen = false;
    if (this.#leader !== null) this.#settle();
  }

  #onLeaderExit(exit: ProcessExit): void {
    this.#leader = exit;
    this.#durationMs = performance.now() - this.#startedAt;
    clearTimeout(this.#timeoutTimer);
    if (!this.#outputOpen) this.#settle();
    else this.#drainTimer = setTimeout(() => this.#settle(), EXIT_DRAIN_GRACE_MS);
  }

  #settle(): void {
    if (this.#status !== null || this.#leader === null) return;
    clearTimeout(this.#drainTimer);
    const status: ExitStatus = Object.freeze({
      exitCode: this.#leader.exitCode,
      signal: this.#leader.signal,
      timedOut: this.#timedOut,
      ...(this.#process.diesWithLeader !== true &&
        this.#process.groupAlive() && { processesLeft: true as const }),
    });
    this.#status = status;
    const outputSha256 = this.#hash?.digest('hex') ?? null;
    this.#hash = null;
    this.#init.onExited(this, {
      exitStatus: status,
      durationMs: this.#durationMs,
      totalBytes: this.#tail.totalBytes,
      droppedBytes: this.#tail.droppedBytes,
      outputSha256,
    });
    for (const waiter of [...this.#waiters]) waiter(status);
    this.#resolveSettled(status);
  }
}

function abortError(signal: AbortSignal): Error {
  return Object.assign(
    new Error('The wait was aborted; the command keeps running', { cause: signal.reason }),
    {
      name: 'AbortError',
      code: 'ABORT_ERR',
    },
  );
}
