import { type ChildProcess, fork } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { CommandRequest, PolicyDecision } from '../decision.js';
import { describeCause } from '../describe-cause.js';
import { PolicyError } from '../policy-file/policy-error.js';
import type { CommandJudge } from '../ports/command-judge.js';
import { SOURCE_ROOT } from '../shell/module-location.js';
import type { FromWorker, ToWorker, WorkerStartError } from './judge-worker-protocol.js';

/** How long `judge` waits for a decision by default: 2 s, far above a normal judgement (well under 1 ms) and the parser's own 150 ms budget. */
export const DEFAULT_JUDGE_TIMEOUT_MS = 2_000;

/** How long a worker may take to answer ready by default (load the grammar, run the embedded tests). */
export const DEFAULT_JUDGE_START_TIMEOUT_MS = 30_000;

/** After `close` disconnects a worker, how long it has to exit before SIGKILL. */
const CLOSE_GRACE_MS = 500;

/** Consecutive failed restarts after which the judge stops trying and denies everything. */
const MAX_FAILED_RESTARTS = 3;

export interface ChildProcessCommandJudgeOptions {
  /** Names the policy in errors and anchors its relative paths, as in `parsePolicyText`. */
  readonly policyPath: string;
  /** The exact policy text to judge with (the text the caller loaded and hashed). */
  readonly policyText: string;
  /** Refuse to start when the policy's embedded tests fail (`PolicyError` `POLICY_TESTS_FAILED`). */
  readonly requirePassingTests: boolean;
  /** Longest wait for one decision, in ms; past it the request is denied and the worker replaced. Default `DEFAULT_JUDGE_TIMEOUT_MS`. */
  readonly timeoutMs?: number;
  /** Longest wait for a worker to answer ready, in ms. Default `DEFAULT_JUDGE_START_TIMEOUT_MS`. */
  readonly startTimeoutMs?: number;
  /**
   * The worker script. Default: `adapters/judge-worker.js` next to this
   * module, i.e. in the built `dist`. Tests that run the TypeScript sources
   * point it at the built file.
   */
  readonly workerPath?: string;
}

/** One forked worker. */
interface Worker {
  readonly child: ChildProcess;
  /** Ids of requests sent to it and not answered yet. */
  readonly inFlight: Set<number>;
  /** Killed, exited or failed to start: takes no more requests. */
  dead: boolean;
}

/** A `judge` call waiting for its decision. */
interface Pending {
  readonly request: CommandRequest;
  readonly resolve: (decision: PolicyDecision) => void;
  /** Runs from the moment the request is sent to a ready worker. */
  timer: NodeJS.Timeout | null;
  /** The worker it was sent to; null while it waits for a worker to start. */
  worker: Worker | null;
}

/**
 * A `CommandJudge` that judges in a forked Node process
 * (`adapters/judge-worker.js`), so that the bash parser (web-tree-sitter,
 * its wasm code and heap) lives there and not in the server: the server
 * stays small, which makes every `fork()` of a command cheaper, and a parser
 * that aborts or hangs is killed and replaced instead of breaking the gate.
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
 * - The worker exits by itself when the parent goes away (IPC channel
 *   closed), and never keeps the parent's event loop alive.
 */
export class ChildProcessCommandJudge implements CommandJudge {
  readonly #policyPath: string;
  readonly #policyText: string;
  readonly #requirePassingTests: boolean;
  readonly #timeoutMs: number;
  readonly #startTimeoutMs: number;
  readonly #workerPath: string;
  readonly #sha256: string;
  /** Every forked process not yet exited (ready, starting, or being killed). */
  readonly #children = new Set<ChildProcess>();
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #worker: Worker | null = null;
  #starting: Promise<Worker> | null = null;
  #failedStarts = 0;
  #lastStartError: unknown = null;
  #closing: Promise<void> | null = null;

  private constructor(options: ChildProcessCommandJudgeOptions) {
    this.#policyPath = options.policyPath;
    this.#policyText = options.policyText;
    this.#requirePassingTests = options.requirePassingTests;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_JUDGE_TIMEOUT_MS;
    this.#startTimeoutMs = options.startTimeoutMs ?? DEFAULT_JUDGE_START_TIMEOUT_MS;
    this.#workerPath = options.workerPath ?? join(SOURCE_ROOT, 'adapters', 'judge-worker.js');
    this.#sha256 = createHash('sha256').update(options.policyText, 'utf8').digest('hex');
  }

  /** Forks a worker for the policy and resolves once it is ready; rejects (leaving nothing running) when it cannot be. */
  static async start(options: ChildProcessCommandJudgeOptions): Promise<ChildProcessCommandJudge> {
    const judge = new ChildProcessCommandJudge(options);
    if (!existsSync(judge.#workerPath)) {
      throw new Error(
        `the policy judge worker ${judge.#workerPath} does not exist (is @termgate/policy built?)`,
      );
    }
    judge.#worker = await judge.#spawn();
    return judge;
  }

  /** Hex SHA-256 of the policy text, which every worker confirmed it parsed. */
  get sha256(): string {
    return this.#sha256;
  }

  /** The ready worker's pid, if one runs (diagnostics and tests). */
  get pid(): number | undefined {
    return this.#worker?.child.pid;
  }

  judge(request: CommandRequest): Promise<PolicyDecision> {
    if (this.#closing !== null) return Promise.resolve(denial('the policy judge is closed'));
    return new Promise((resolve) => {
      const id = this.#nextId++;
      this.#pending.set(id, { request, resolve, timer: null, worker: null });
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
    if (this.#worker !== null) this.#worker.dead = true;
    this.#worker = null;
    this.#closing = Promise.all([...this.#children].map(endChild)).then(() => undefined);
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
          void endChild(worker.child);
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
    pending.timer = setTimeout(() => this.#timedOut(id), this.#timeoutMs);
    worker.inFlight.add(id);
    const message: ToWorker = { type: 'judge', id, request: pending.request };
    try {
      worker.child.send(message, (error) => {
        if (error) this.#settle(id, denial(`the policy judge worker is unreachable (${error.message})`));
      });
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
    this.#settle(
      id,
      denial(`the policy judge did not answer within ${this.#timeoutMs} ms; it was restarted`),
    );
    this.#retire(worker, `it did not answer within ${this.#timeoutMs} ms`);
  }

  /** Kills a worker that failed and denies what it had; the next request starts another. */
  #retire(worker: Worker, why: string): void {
    if (worker.dead) return;
    worker.dead = true;
    if (this.#worker === worker) this.#worker = null;
    worker.child.kill('SIGKILL');
    for (const id of [...worker.inFlight]) {
      this.#settle(id, denial(`the policy judge worker stopped (${why}) before it answered`));
    }
  }

  /** Forks a worker and resolves once it is ready for this policy. */
  #spawn(): Promise<Worker> {
    return new Promise((resolve, reject) => {
      let child: ChildProcess;
      try {
        child = fork(this.#workerPath, [], {
          // Explicit, not the default: the environment this module sees (under jest, its sandbox's copy).
          env: process.env,
          execArgv: [],
          serialization: 'json',
          stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
        });
      } catch (error) {
        reject(error);
        return;
      }
      this.#children.add(child);
      const worker: Worker = { child, inFlight: new Set(), dead: false };
      let ready = false;
      const fail = (error: unknown): void => {
        if (ready || worker.dead) return;
        worker.dead = true;
        clearTimeout(timer);
        child.kill('SIGKILL');
        reject(error);
      };
      const timer = setTimeout(
        () => fail(new Error(`the policy judge worker did not start within ${this.#startTimeoutMs} ms`)),
        this.#startTimeoutMs,
      );
      child.on('message', (message: FromWorker) => {
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
          ready = true;
          clearTimeout(timer);
          resolve(worker);
        }
      });
      child.on('exit', (code, signal) => {
        this.#children.delete(child);
        const how = signal !== null ? `killed by ${signal}` : `exited with code ${code}`;
        if (ready) this.#retire(worker, how);
        else fail(new Error(`the policy judge worker ${how} before it was ready`));
      });
      child.on('error', (error) => {
        if (ready) this.#retire(worker, error.message);
        else fail(error);
      });
      // The worker never keeps the server alive; a pending request's timer does.
      child.unref();
      child.channel?.unref();
      const init: ToWorker = {
        type: 'init',
        policyPath: this.#policyPath,
        policyText: this.#policyText,
        requirePassingTests: this.#requirePassingTests,
      };
      child.send(init, (error) => {
        if (error) fail(error);
      });
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

/** Disconnects a child, SIGKILLs it if it has not exited after the grace, and resolves when it exited. */
function endChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    // The worker is unref'd while it serves; its end is awaited, so it must keep the process
    // alive until then (else, with nothing else open, Node exits 0 in the middle of a shutdown).
    child.ref();
    const kill = setTimeout(() => child.kill('SIGKILL'), CLOSE_GRACE_MS);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    if (child.connected) child.disconnect();
    else child.kill('SIGKILL');
  });
}
