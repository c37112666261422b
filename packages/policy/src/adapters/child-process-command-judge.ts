import { type ChildProcess, fork } from 'node:child_process';
import {
  type CommandJudgeWorkerOptions,
  type JudgeWorkerEvents,
  type JudgeWorkerHandle,
  JudgeWorkerPool,
} from './judge-worker-pool.js';

/** After `end` disconnects a worker, how long it has to exit before SIGKILL. */
const CLOSE_GRACE_MS = 500;

export type ChildProcessCommandJudgeOptions = CommandJudgeWorkerOptions;

/**
 * The judge (`JudgeWorkerPool`'s contract) with each worker a forked Node
 * process: the strongest isolation (a native crash of the parser cannot
 * reach the server), at the cost of a second Node process (about 110 MB and
 * a Node start per worker). `serve` uses `WorkerThreadCommandJudge`.
 * The worker exits by itself when the IPC channel closes (parent gone).
 */
export class ChildProcessCommandJudge extends JudgeWorkerPool {
  /** Forks a worker for the policy and resolves once it is ready; rejects (leaving nothing running) when it cannot be. */
  static async start(options: ChildProcessCommandJudgeOptions): Promise<ChildProcessCommandJudge> {
    const judge = new ChildProcessCommandJudge(options, forkWorker);
    await judge.startFirst();
    return judge;
  }

  /** The ready worker's pid, if one runs (diagnostics and tests). */
  get pid(): number | undefined {
    return this.workerId;
  }
}

function forkWorker(workerPath: string, events: JudgeWorkerEvents): JudgeWorkerHandle {
  const child = fork(workerPath, [], {
    // Explicit, not the default: the environment this module sees (under jest, its sandbox's copy).
    env: process.env,
    execArgv: [],
    serialization: 'json',
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  child.on('message', (message) => events.message(message as Parameters<JudgeWorkerEvents['message']>[0]));
  child.on('exit', (code, signal) =>
    events.exit(signal !== null ? `killed by ${signal}` : `exited with code ${code}`),
  );
  child.on('error', (error) => events.error(error));
  // The worker never keeps the server alive; a pending request's timer does.
  child.unref();
  child.channel?.unref();
  return {
    id: child.pid,
    send: (message, onError) => {
      child.send(message, (error) => {
        if (error) onError(error);
      });
    },
    kill: () => child.kill('SIGKILL'),
    end: () => endChild(child),
  };
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
