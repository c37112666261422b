import { readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { Config } from 'jest';
import base from './jest.base.config';

/**
 * The suite in four lanes (jest projects), each runnable alone
 * (`pnpm test:unit`, `test:process`, `test:sandbox`, `test:e2e`, or
 * `npx jest --selectProjects <lane>`); plain `jest` runs them all. A test
 * file's lane follows from its path alone, first rule that matches
 * (docs/TESTING.md):
 *
 * 1. `sandbox`: under a `sandbox/` directory of a `test/` tree (bubblewrap).
 * 2. `e2e`: under `packages/cli/test/` (the built `termgate`, packages/cli/dist/bin.js).
 * 3. `process`: under `packages/termhost/test/`, or a `test/adapters/` or
 *    `test/corpus/` directory, or named `*.host.test.ts` (real child
 *    processes: terminals, spawners, the judge worker, bash itself).
 * 4. `unit`: everything else (pure and in-process).
 *
 * The lanes that run built files (process: the judge worker and the audit
 * writer's child; sandbox and e2e: packages/cli/dist/bin.js) first check
 * that every packages/*\/dist is newer than its sources
 * (test-support/fresh-dist.ts).
 */
export const LANES = ['unit', 'process', 'sandbox', 'e2e'] as const;
export type Lane = (typeof LANES)[number];

/** The lane of a test file, by its path relative to the repository root ('/'-separated). */
export function laneOf(file: string): Lane {
  if (/(^|\/)test\/(.+\/)?sandbox\//.test(file)) return 'sandbox';
  if (file.startsWith('packages/cli/test/')) return 'e2e';
  if (file.startsWith('packages/termhost/test/')) return 'process';
  if (/\/test\/(.+\/)?(adapters|corpus)\//.test(file)) return 'process';
  if (file.endsWith('.host.test.ts')) return 'process';
  return 'unit';
}

/** Every `*.test.ts` under packages/ (not node_modules, dist or the staged package), repository-relative. */
export function testFiles(root: string): string[] {
  const skip = new Set(['node_modules', 'dist', 'pack']);
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) {
        if (!skip.has(entry.name)) walk(join(dir, entry.name));
      } else if (entry.name.endsWith('.test.ts')) {
        found.push(relative(root, join(dir, entry.name)).split(sep).join('/'));
      }
    }
  };
  walk(join(root, 'packages'));
  return found.sort();
}

const root = __dirname;
const files = testFiles(root);
const RUNS_BUILT_FILES: readonly Lane[] = ['process', 'sandbox', 'e2e'];

// maxWorkers and testTimeout are run options, not project options.
const { maxWorkers, testTimeout, ...projectOptions } = base;

const config: Config = {
  projects: LANES.map((lane) => ({
    ...projectOptions,
    rootDir: root,
    displayName: lane,
    testMatch: files.filter((file) => laneOf(file) === lane).map((file) => `<rootDir>/${file}`),
    ...(RUNS_BUILT_FILES.includes(lane) ? { globalSetup: '<rootDir>/test-support/fresh-dist.ts' } : {}),
  })),
  maxWorkers: maxWorkers ?? 2,
  testTimeout: testTimeout ?? 60_000,
};

export default config;
