import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './corpus.js';

/**
 * The built judge worker. Jest runs the TypeScript sources, but a worker
 * thread or a forked process is Node itself, which cannot run `.ts` on Node
 * 20 (and the sources import each other as `.js`), so tests point the judges
 * at `dist` (the root `pnpm test` builds before it runs jest; the process
 * lane checks the build is fresh, test-support/fresh-dist.ts).
 */
export function builtJudgeWorker(): string {
  const path = join(REPO_ROOT, 'packages', 'policy', 'dist', 'adapters', 'judge-worker.js');
  if (!existsSync(path)) {
    throw new Error(`${path} is missing: build first (npx -y pnpm@12.4.2 run build, or npx tsc -b)`);
  }
  return path;
}

/**
 * A worker that spins forever on `HANG_COMMAND`, runs out of memory on `CRASH_COMMAND`,
 * and is the shipped worker otherwise (`test/fixtures/hanging-judge-worker.mjs`): for the timeout,
 * kill and close paths. It loads the built worker, so that must exist.
 */
export function hangingJudgeWorker(): string {
  builtJudgeWorker();
  return join(REPO_ROOT, 'packages', 'policy', 'test', 'fixtures', 'hanging-judge-worker.mjs');
}

/** The command line that `hangingJudgeWorker()` never answers (the fixture spells it too). */
export const HANG_COMMAND = 'termgate-judge-worker-test: hang';

/**
 * The command line on which `hangingJudgeWorker()` blocks for `ms` without
 * using the CPU (as a thread the machine does not schedule), then answers
 * as the shipped worker (the fixture spells the prefix too).
 */
export const stallCommand = (ms: number): string => `termgate-judge-worker-test: stall ${ms}`;

/** The command line on which `hangingJudgeWorker()` fills its heap until it dies of it (the fixture spells it too). */
export const CRASH_COMMAND = 'termgate-judge-worker-test: crash';

/** Polls `condition` every 10 ms until it holds, or fails after `ms` (generous: a loaded machine starts workers slowly). */
export async function waitUntil(condition: () => boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
