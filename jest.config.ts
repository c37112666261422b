/**
 * @jest-config-loader-options {"transpileOnly": true}
 */
import type { Config } from 'jest';
import base from './jest.base.config.ts';

/**
 * The suite in four lanes (jest projects), each runnable alone
 * (`pnpm test:unit`, `test:process`, `test:sandbox`, `test:e2e`, or
 * `pnpm jest --selectProjects <lane>`); plain `pnpm jest` runs them all. A test
 * file's lane follows from its path alone, first rule that matches
 * (docs/TESTING.md):
 *
 * 1. `sandbox`: under a `sandbox/` directory of a package's `test/` tree (bubblewrap).
 * 2. `e2e`: under `packages/cli/test/` (the built `termgate`, packages/cli/dist/bin.js).
 * 3. `process`: under `packages/termhost/test/`, or a `test/adapters/` or
 *    `test/corpus/` directory, or named `*.host.test.ts` (real child
 *    processes: terminals, spawners, the judge worker, bash itself).
 * 4. `unit`: everything else under a package's `test/` (pure and in-process).
 *
 * "First rule that matches" is spelled as negated globs: each lane excludes
 * the earlier lanes' globs. scripts/check-test-lanes.mjs checks that every
 * `*.test.ts` under packages/ is in exactly one lane.
 *
 * The lanes that run built files (process: the judge worker and the audit
 * writer's child; sandbox and e2e: packages/cli/dist/bin.js) first check
 * that every packages/*\/dist is newer than its sources
 * (test-support/fresh-dist.ts).
 *
 * This file and jest.base.config.ts load under ts-node (Node 20) and under
 * Node's own type stripping (22.18+, where they are ES modules): hence the
 * `.ts` import (ts-node only transpiles this file, as the pragma above asks;
 * `tsc -b` type-checks it) and no `__dirname`; `<rootDir>` is this file's
 * directory. (The tests themselves always load as ES modules:
 * jest.base.config.ts.)
 */
const SANDBOX = ['<rootDir>/packages/*/test/**/sandbox/**/*.test.ts'];
const E2E = ['<rootDir>/packages/cli/test/**/*.test.ts'];
const PROCESS = [
  '<rootDir>/packages/termhost/test/**/*.test.ts',
  '<rootDir>/packages/*/test/**/adapters/**/*.test.ts',
  '<rootDir>/packages/*/test/**/corpus/**/*.test.ts',
  '<rootDir>/packages/*/test/**/*.host.test.ts',
];
const UNIT = ['<rootDir>/packages/*/test/**/*.test.ts'];
// jest replaces `<rootDir>` only at the start of a glob, so a negation is spelled from `**/`.
const not = (globs: string[]): string[] => globs.map((glob) => `!${glob.replace('<rootDir>/', '**/')}`);

const LANES = {
  sandbox: SANDBOX,
  e2e: [...E2E, ...not(SANDBOX)],
  process: [...PROCESS, ...not(SANDBOX), ...not(E2E)],
  unit: [...UNIT, ...not(SANDBOX), ...not(E2E), ...not(PROCESS)],
};
const RUNS_BUILT_FILES = new Set(['process', 'sandbox', 'e2e']);

// maxWorkers and testTimeout are run options, not project options.
const { maxWorkers, testTimeout, ...projectOptions } = base;

const config: Config = {
  projects: Object.entries(LANES).map(([lane, testMatch]) => ({
    ...projectOptions,
    displayName: lane,
    testMatch,
    ...(RUNS_BUILT_FILES.has(lane) ? { globalSetup: '<rootDir>/test-support/fresh-dist.ts' } : {}),
  })),
  maxWorkers: maxWorkers ?? 2,
  testTimeout: testTimeout ?? 60_000,
};

export default config;
