import { Worker } from 'node:worker_threads';
import {
  type CommandJudgeWorkerOptions,
  type JudgeWorkerEvents,
  type JudgeWorkerHandle,
  JudgeWorkerPool,
} from './judge-worker-pool.js';

/** Heap a judge thread may use (old generation, MB): past it V8 ends the thread (a deny, then a new thread), not the server. */
const JUDGE_THREAD_HEAP_MB = 256;

export type WorkerThreadCommandJudgeOptions = CommandJudgeWorkerOptions;

/**
 * The judge (`JudgeWorkerPool`'s contract) with each worker a worker thread
 * (`node:worker_threads`): its own V8 isolate and heap, so the parser's
 * modules, wasm instance and heap are not the main thread's, without a
 * second Node process (no Node start, no second copy of the runtime).
 *
 * Crash isolation: the parser is WebAssembly, so a fault in it is a trap
 * (an exception the worker turns into a deny) and cannot corrupt the
 * process; a hang is ended by `terminate` (V8 interrupts JS and wasm
 * loops); a heap past `JUDGE_THREAD_HEAP_MB` ends the thread
 * (`ERR_WORKER_OUT_OF_MEMORY`); an uncaught error or `process.exit` in the
 * worker ends only the thread. Each is a deny, and the next request gets a
 * new thread. What a thread cannot contain is a fault in Node itself (a
 * native crash), which a process would: `ChildProcessCommandJudge` remains
 * for that trade.
 */
export class WorkerThreadCommandJudge extends JudgeWorkerPool {
  /** Starts a worker thread for the policy and resolves once it is ready; rejects (leaving nothing running) when it cannot be. */
  static async start(options: WorkerThreadCommandJudgeOptions): Promise<WorkerThreadCommandJudge> {
    const judge = new WorkerThreadCommandJudge(options, startThread);
    await judge.startFirst();
    return judge;
  }

  /** The ready worker's thread id, if one runs (diagnostics and tests). */
  get threadId(): number | undefined {
    return this.workerId;
  }
}

function startThread(workerPath: string, events: JudgeWorkerEvents): JudgeWorkerHandle {
  const worker = new Worker(workerPath, {
    // Its own copy of this module's environment (under jest, the sandbox's copy).
    env: { ...process.env },
    execArgv: [],
    argv: [],
    // Its stdout is never the protocol's: captured here and dropped (the worker writes none).
    stdout: true,
    resourceLimits: { maxOldGenerationSizeMb: JUDGE_THREAD_HEAP_MB },
  });
  worker.stdout.resume();
  let exited = false;
  const gone = new Promise<void>((resolve) => {
    worker.once('exit', (code) => {
      exited = true;
      resolve();
      events.exit(`exited with code ${code}`);
    });
  });
  worker.on('message', (message) => events.message(message as Parameters<JudgeWorkerEvents['message']>[0]));
  worker.on('error', (error) => events.error(error));
  // The worker never keeps the server alive; a pending request's timer does.
  worker.unref();
  const terminate = (): Promise<void> => {
    if (exited) return Promise.resolve();
    void worker.terminate().catch(() => {});
    return gone;
  };
  return {
    id: worker.threadId,
    send: (message, onError) => {
      try {
        worker.postMessage(message);
      } catch (error) {
        onError(error instanceof Error ? error : new Error(String(error)));
      }
    },
    kill: () => void terminate(),
    end: () => {
      // Awaited at shutdown: keep the process alive until the thread is gone.
      worker.ref();
      return terminate();
    },
  };
}
