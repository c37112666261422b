/**
 * The policy package's adapters: the command judge that runs the engine in a
 * worker (`judge-worker.ts`), as a worker thread (what `serve` uses) or a
 * forked process, for the composition root. Named exports only.
 */
export {
  ChildProcessCommandJudge,
  type ChildProcessCommandJudgeOptions,
} from './child-process-command-judge.js';
export {
  type CommandJudgeWorkerOptions,
  DEFAULT_JUDGE_START_TIMEOUT_MS,
  DEFAULT_JUDGE_TIMEOUT_MS,
} from './judge-worker-pool.js';
export {
  WorkerThreadCommandJudge,
  type WorkerThreadCommandJudgeOptions,
} from './worker-thread-command-judge.js';
export {
  DEFAULT_PROFILE_TIMEOUT_MS,
  WorkerThreadSandboxProfiler,
  type WorkerThreadSandboxProfilerOptions,
} from './worker-thread-sandbox-profiler.js';
