import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './corpus.js';

/**
 * The built judge worker. Jest runs the TypeScript sources, which `fork`
 * cannot run, so tests point `ChildProcessCommandJudge` at `dist` (the root
 * `pnpm test` builds before it runs jest).
 */
export function builtJudgeWorker(): string {
  const path = join(REPO_ROOT, 'packages', 'policy', 'dist', 'adapters', 'judge-worker.js');
  if (!existsSync(path)) {
    throw new Error(`${path} is missing: build first (npx -y pnpm@12.4.2 run build, or npx tsc -b)`);
  }
  return path;
}

/** Polls `condition` every 10 ms until it holds, or fails after `ms`. */
export async function waitUntil(condition: () => boolean, what: string, ms = 3_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
