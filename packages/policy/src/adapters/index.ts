/**
 * The policy package's adapters: the command judge that runs the engine in a
 * worker process (`judge-worker.ts`), for the composition root. Named exports
 * only.
 */
export {
  ChildProcessCommandJudge,
  type ChildProcessCommandJudgeOptions,
  DEFAULT_JUDGE_START_TIMEOUT_MS,
  DEFAULT_JUDGE_TIMEOUT_MS,
} from './child-process-command-judge.js';
