import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CpuClock } from '../cpu-clock.js';
import type { CommandRequest, PolicyDecision } from '../decision.js';
import { describeCause } from '../describe-cause.js';
import type { Loosening } from '../layers/merge-sandbox.js';
import { PolicyError } from '../policy-file/policy-error.js';
import type { CommandJudge } from '../ports/command-judge.js';
import { SOURCE_ROOT } from '../shell/module-location.js';
import type { FromWorker, ManagedLayerText, ToWorker, WorkerStartError } from './judge-worker-protocol.js';

/**
 * How much of the worker's CPU time a decision may take by default: 2 s,
 * far above a normal judgement (well under 1 ms) and the parser's own
 * 150 ms budget.
 */
export const DEFAULT_JUDGE_TIMEOUT_MS = 2_000;

/** How many times `timeoutMs` of wall-clock time a decision may wait, by default, while its worker has not used `timeoutMs` of CPU. */
const STARVED_WAIT_FACTOR = 15;

/** How long a worker may take to answer ready by default (load the grammar, run the embedded tests). */
export const DEFAULT_JUDGE_START_TIMEOUT_MS = 30_000;

/** Consecutive failed restarts after which the judge stops trying and denies everything. */
const MAX_FAILED_RESTARTS = 3;

export interface CommandJudgeWorkerOptions {
  /** Names the policy in errors and anchors its relative paths, as in `parsePolicyText`. */
  readonly policyPath: string;
  /** The exact policy text to judge with (the text the caller loaded and hashed). */
  readonly policyText: string;
  /**
   * A managed policy layer over this one (`LayeredPolicyEngine`): its exact
   * text, judged with the policy text, the stricter decision winning.
   */
  readonly managed?: ManagedLayerText;
  /** Refuse to start when the policy's embedded tests fail (`PolicyError` `POLICY_TESTS_FAILED`); with a managed layer, its tests too, on the layered result. */
  readonly requirePassingTests: boolean;
  /**
   * Check the rules' `examples` (refuse the policy when one fails). Default
   * true; false only when this exact text's examples are known to pass.
   */
  readonly checkExamples?: boolean;
  /**
   * How long one decision may take, in ms of the worker's CPU time (where
   * procfs tells it; else of wall-clock time); past it the request is
   * denied and the worker replaced. Default `DEFAULT_JUDGE_TIMEOUT_MS`.
   */
  readonly timeoutMs?: number;
  /**
   * The longest wall-clock wait for one decision, in ms, however little CPU
   * its worker used (a worker blocked, or starved by a loaded machine).
   * Default `STARVED_WAIT_FACTOR` × `timeoutMs`.
   */
  readonly maxWaitMs?: number;
  /** Longest wait for a worker to answer ready, in ms. Default `DEFAULT_JUDGE_START_TIMEOUT_MS`. */
  readonly startTimeoutMs?: number;
  /**
   * The worker script. Default: `adapters/judge-worker.js` next to this
   * module, i.e. in the built `dist`. Tests that run the TypeScript sources
   * point it at the built file.
   */
  readonly workerPath?: string;
}

/** What a worker (thread or process) tells the pool. */
export interface JudgeWorkerEvents {
  message(message: FromWorker): void;
  /** It ended; `how` says how ("exited with code 1", "killed by SIGKILL"). */
  exit(how: string): void;
  error(error: Error): void;
}

/** One started worker, as the pool drives it. */
export interface JudgeWorkerHandle {
  /** Hands a message over; `onError` runs when it cannot be delivered. */
  send(message: ToWorker, onError: (error: Error) => void): void;
  /** Ends it at once (SIGKILL, `terminate`). */
  kill(): void;
  /** Ends it (gracefully, then forcibly after a short grace) and resolves once it is gone. */
  end(): Promise<void>;
  /** Its pid or thread id (diagnostics and tests). */
  readonly id: number | undefined;
}

/** Starts one worker running `workerPath`; it reports through `events` and never keeps the process alive while it serves. */
export type LaunchJudgeWorker = (workerPath: string, events: JudgeWorkerEvents) => JudgeWorkerHandle;

/** One started worker. */
interface Worker {
  readonly child: JudgeWorkerHandle;
  /** Ids of requests sent to it and not answered yet. */
  readonly inFlight: Set<number>;
  /** Killed, exited or failed to start: takes no more requests. */
  dead: boolean;
  /** The CPU time of the thread that judges, once it said which (`ready`); null: the wall clock decides. */
  clock: CpuClock | null;
}

/** A `judge` call waiting for its decision. */
interface Pending {
  readonly request: CommandRequest;
  readonly resolve: (decision: PolicyDecision) => void;
  /** Runs from the moment the request is sent to a ready worker. */
  timer: NodeJS.Timeout | null;
  /** When it was sent (`performance.now()`), and the worker's CPU time then (null: unknown). */
  sentAt: number;
  cpuAtSend: number | null;
  /** The worker it was sent to; null while it waits for a worker to start. */
  worker: Worker | null;
}

/**
 * A `CommandJudge` that judges in a worker (`adapters/judge-worker.js`), so
 * that the bash parser (web-tree-sitter, its wasm code and heap) lives there
 * and not in the server's main thread: a parser that throws, aborts or hangs
 * is ended and replaced instead of breaking the gate. How a worker is
 * started is the subclass's (`WorkerThreadCommandJudge`,
 * `ChildProcessCommandJudge`).
 *
 * The worker parses the policy *text* it is sent (not the file, which may
 * have changed since), and must report the same sha256 as that text.
 *
 * Contract:
 * - `start` resolves once a worker is ready (engine built, embedded tests
 *   passed when required) and rejects with the worker's error otherwise
 *   (a `PolicyError` keeps its code and issues); nothing is left running.
 * - `judge` never rejects and never allows on a failure: a decision not
 *   received within `timeoutMs` of being sent to a ready worker is a deny,
 *   and the worker is killed; a worker that exits or fails denies every
 *   request it had. The next request starts a new worker and waits for it
 *   (bounded by `startTimeoutMs`: a start that fails or times out denies it),
 *   so a restart slowed by a busy machine is not mistaken for a hang.
 *   After `MAX_FAILED_RESTARTS` consecutive failed starts, every request is
 *   denied with the last start error.
 * - `close` ends the worker (disconnect, SIGKILL after a short grace) and
 *   denies what is pending; later requests are denied. Idempotent.
 * - A worker ends with its parent, and never keeps the parent's event loop alive.
 */
export class JudgeWorkerPool implements CommandJudge {
  readonly #policyPath: string;
  readonly #policyText: string;
  readonly #requirePassingTests: boolean;
  readonly #checkExamples: boolean;
  readonly #launch: LaunchJudgeWorker;
  readonly #timeoutMs: number;
  readonly #maxWaitMs: number;
  readonly #startTimeoutMs: number;
  readonly #workerPath: string;
  readonly #sha256: string;
  readonly #managed: ManagedLayerText | undefined;
  readonly #managedSha256: string | null;
  #loosenings: readonly Loosening[] = [];
  /** Every started worker not yet ended (ready, starting, or being killed). */
  readonly #children = new Set<JudgeWorkerHandle>();
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #worker: Worker | null = null;
  #starting: Promise<Worker> | null = null;
  #failedStarts = 0;
  #lastStartError: unknown = null;
  #closing: Promise<void> | null = null;

  protected constructor(options: CommandJudgeWorkerOptions, launch: LaunchJudgeWorker) {
    this.#launch = launch;
    this.#checkExamples = options.checkExamples ?? true;
    this.#policyPath = options.policyPath;
    this.#policyText = options.policyText;
    this.#requirePassingTests = options.requirePassingTests;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_JUDGE_TIMEOUT_MS;
    this.#maxWaitMs = Math.max(this.#timeoutMs, options.maxWaitMs ?? this.#timeoutMs * STARVED_WAIT_FACTOR);
    this.#startTimeoutMs = options.startTimeoutMs ?? DEFAULT_JUDGE_START_TIMEOUT_MS;
    this.#workerPath = options.workerPath ?? join(SOURCE_ROOT, 'adapters', 'judge-worker.js');
    this.#sha256 = createHash('sha256').update(options.policyText, 'utf8').digest('hex');
    this.#managed = options.managed;
    this.#managedSha256 =
      options.managed === undefined
        ? null
        : createHash('sha256').update(options.managed.text, 'utf8').digest('hex');
  }

  /** Starts the first worker and resolves once it is ready; rejects (leaving nothing running) when it cannot be. */
  protected async startFirst(): Promise<void> {
    if (!existsSync(this.#workerPath)) {
      throw new Error(
        `the policy judge worker ${this.#workerPath} does not exist (is @termgate/policy built?)`,
      );
    }
    this.#worker = await this.#spawn();
  }

  /** Hex SHA-256 of the policy text, which every worker confirmed it parsed. */
  get sha256(): string {
    return this.#sha256;
  }

  /** Hex SHA-256 of the managed layer's text, which every worker confirmed it parsed; null without one. */
  get managedSha256(): string | null {
    return this.#managedSha256;
  }

  /** What the workspace policy asked beyond the managed layer, as the first worker found (empty without one). */
  get loosenings(): readonly Loosening[] {
    return this.#loosenings;
  }

  /** The ready worker's pid or thread id, if one runs (diagnostics and tests). */
  get workerId(): number | undefined {
    return this.#worker?.child.id;
  }

  judge(request: CommandRequest): Promise<PolicyDecision> {
    if (this.#closing !== null) return Promise.resolve(denial('the policy judge is closed'));
    return new Promise((resolve) => {
      const id = this.#nextId++;
      this.#pending.set(id, { request, resolve, timer: null, worker: null, sentAt: 0, cpuAtSend: null });
      if (this.#worker !== null) {
        this.#dispatch(id, this.#worker);
        return;
      }
      this.#readyWorker().then(
        (worker) => this.#dispatch(id, worker),
        (error: unknown) =>
          this.#settle(id, denial(`the policy judge could not start (${describeCause(error)})`)),
      );
    });
  }

  /** Ends every worker: disconnect, then SIGKILL after a short grace. Pending and later requests are denied. */
  close(): Promise<void> {
    if (this.#closing !== null) return this.#closing;
    for (const id of [...this.#pending.keys()]) this.#settle(id, denial('the policy judge was closed'));
    if (this.#worker !== null) {
      this.#worker.dead = true;
      this.#worker.clock?.close();
    }
    this.#worker = null;
    this.#closing = Promise.all([...this.#children].map((child) => child.end())).then(() => undefined);
    return this.#closing;
  }

  /** The ready worker, or the one starting, or a new one (unless restarts keep failing). */
  #readyWorker(): Promise<Worker> {
    if (this.#worker !== null) return Promise.resolve(this.#worker);
    if (this.#starting !== null) return this.#starting;
    if (this.#failedStarts >= MAX_FAILED_RESTARTS) return Promise.reject(this.#lastStartError);
    this.#starting = this.#spawn().then(
      (worker) => {
        this.#starting = null;
        this.#failedStarts = 0;
        if (this.#closing !== null) {
          worker.dead = true;
          worker.clock?.close();
          void worker.child.end();
          throw new Error('the policy judge was closed');
        }
        this.#worker = worker;
        return worker;
      },
      (error: unknown) => {
        this.#starting = null;
        this.#failedStarts++;
        this.#lastStartError = error;
        throw error;
      },
    );
    return this.#starting;
  }

  #dispatch(id: number, worker: Worker): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) return; // timed out while the worker started
    if (worker.dead) {
      this.#settle(id, denial('the policy judge worker stopped before it judged the request'));
      return;
    }
    pending.worker = worker;
    pending.sentAt = performance.now();
    pending.cpuAtSend = worker.clock?.ms() ?? null;
    pending.timer = setTimeout(() => this.#timedOut(id), this.#timeoutMs);
    worker.inFlight.add(id);
    const message: ToWorker = { type: 'judge', id, request: pending.request };
    try {
      worker.child.send(message, (error) =>
        this.#settle(id, denial(`the policy judge worker is unreachable (${error.message})`)),
      );
    } catch (error) {
      this.#settle(id, denial(`the policy judge worker is unreachable (${describeCause(error)})`));
    }
  }

  #settle(id: number, decision: PolicyDecision): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    this.#pending.delete(id);
    if (pending.timer !== null) clearTimeout(pending.timer);
    pending.worker?.inFlight.delete(id);
    pending.resolve(decision);
  }

  #timedOut(id: number): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    const { worker } = pending;
    if (worker === null) return; // only dispatched requests have a timer
    const waitMore = this.#starvedFor(pending, worker);
    if (waitMore > 0) {
      pending.timer = setTimeout(() => this.#timedOut(id), waitMore);
      return;
    }
    const why =
      waitMore < 0
        ? `did not answer within ${this.#maxWaitMs} ms, though it used less than ${this.#timeoutMs} ms of CPU`
        : `did not answer within ${this.#timeoutMs} ms`;
    this.#settle(id, denial(`the policy judge ${why}; it was restarted`));
    this.#retire(worker, `it ${why}`);
  }

  /**
   * How much longer (ms) a request whose timer ran out may wait: its worker
   * has used less than `timeoutMs` of CPU since it was sent (it waited for
   * the CPU, not used it) and `maxWaitMs` has not passed. 0: it used its
   * CPU time (or the CPU time is unknown); -1: it waited `maxWaitMs`.
   */
  #starvedFor(pending: Pending, worker: Worker): number {
    if (pending.cpuAtSend === null || worker.clock === null) return 0;
    const now = worker.clock.ms();
    if (now === null) return 0;
    const spent = now - pending.cpuAtSend;
    if (spent >= this.#timeoutMs) return 0;
    const left = this.#maxWaitMs - (performance.now() - pending.sentAt);
    if (left <= 0) return -1;
    return Math.max(1, Math.min(this.#timeoutMs - spent, left));
  }

  /** Kills a worker that failed and denies what it had; the next request starts another. */
  #retire(worker: Worker, why: string): void {
    if (worker.dead) return;
    worker.dead = true;
    if (this.#worker === worker) this.#worker = null;
    worker.clock?.close();
    worker.clock = null;
    worker.child.kill();
    for (const id of [...worker.inFlight]) {
      this.#settle(id, denial(`the policy judge worker stopped (${why}) before it answered`));
    }
  }

  /** Starts a worker and resolves once it is ready for this policy. */
  #spawn(): Promise<Worker> {
    return new Promise((resolve, reject) => {
      let ready = false;
      let worker: Worker | null = null;
      let timer: NodeJS.Timeout | undefined;
      const fail = (error: unknown): void => {
        if (ready || worker === null || worker.dead) return;
        worker.dead = true;
        clearTimeout(timer);
        worker.child.kill();
        reject(error);
      };
      let child: JudgeWorkerHandle;
      try {
        child = this.#launch(this.#workerPath, {
          message: (message) => {
            if (worker === null) return;
            if (message.type === 'decision') {
              if (ready && worker.inFlight.has(message.id)) this.#settle(message.id, message.decision);
            } else if (message.type === 'failed') {
              fail(startError(message.error));
            } else if (message.type === 'ready' && !ready && !worker.dead) {
              if (message.sha256 !== this.#sha256) {
                fail(
                  new Error(
                    `the policy judge worker parsed sha256 ${message.sha256}, not the ${this.#sha256} it was sent`,
                  ),
                );
                return;
              }
              if ((message.managedSha256 ?? null) !== this.#managedSha256) {
                fail(
                  new Error(
                    `the policy judge worker parsed managed sha256 ${message.managedSha256 ?? '(none)'}, not the ${this.#managedSha256 ?? '(none)'} it was sent`,
                  ),
                );
                return;
              }
              this.#loosenings = message.loosenings ?? [];
              ready = true;
              clearTimeout(timer);
              if (message.pid !== undefined && message.tid !== undefined) {
                worker.clock = CpuClock.openThread(message.pid, message.tid);
              }
              resolve(worker);
            }
          },
          exit: (how) => {
            this.#children.delete(child);
            if (worker === null) return;
            if (ready) this.#retire(worker, how);
            else fail(new Error(`the policy judge worker ${how} before it was ready`));
          },
          error: (error) => {
            if (worker === null) return;
            if (ready) this.#retire(worker, error.message);
            else fail(error);
          },
        });
      } catch (error) {
        reject(error);
        return;
      }
      this.#children.add(child);
      worker = { child, inFlight: new Set(), dead: false, clock: null };
      timer = setTimeout(
        () => fail(new Error(`the policy judge worker did not start within ${this.#startTimeoutMs} ms`)),
        this.#startTimeoutMs,
      );
      const init: ToWorker = {
        type: 'init',
        policyPath: this.#policyPath,
        policyText: this.#policyText,
        ...(this.#managed !== undefined && { managed: this.#managed }),
        requirePassingTests: this.#requirePassingTests,
        checkExamples: this.#checkExamples,
      };
      try {
        child.send(init, fail);
      } catch (error) {
        fail(error);
      }
    });
  }
}

/** A deny the gate records as is: the judge could not judge, so nothing runs. */
function denial(why: string): PolicyDecision {
  return {
    decision: 'deny',
    ruleIds: [],
    reason: `denied: ${why}; nothing was run`,
    subcommands: [],
    resolvedCwd: null,
  };
}

/** The worker's start failure as an error: a `PolicyError` with its code and issues, else a plain `Error`. */
function startError(error: WorkerStartError): Error {
  return error.kind === 'policy'
    ? new PolicyError(error.code, error.headline, error.issues)
    : new Error(`the policy judge worker failed to start: ${error.message}`);
}
