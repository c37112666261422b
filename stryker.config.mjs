// StrykerJS for one group of stryker/groups.mjs, chosen by
// TERMGATE_MUTATION_GROUP. Run it through `pnpm test:mutation [group…]`
// (scripts/test-mutation.mjs), which picks the Node.js runtime StrykerJS needs
// and runs it at low priority; see docs/MUTATION.md.
import { createRequire } from 'node:module';
import { GROUPS } from './stryker/groups.mjs';

const name = process.env.TERMGATE_MUTATION_GROUP;
const group = GROUPS[name];
if (group === undefined) {
  throw new Error(
    `TERMGATE_MUTATION_GROUP=${JSON.stringify(name)} is no group; one of: ${Object.keys(GROUPS).join(', ')}`,
  );
}

// StrykerJS wraps the suite's test environment and loads the original by name
// from its own package, where pnpm does not put jest-environment-node; hand it
// the one jest itself uses (jest → @jest/core → jest-config), by path.
const resolveFrom = (file, id) => createRequire(file).resolve(id);
const jestConfig = resolveFrom(
  resolveFrom(resolveFrom(import.meta.url, 'jest/package.json'), '@jest/core/package.json'),
  'jest-config/package.json',
);
const testEnvironment = resolveFrom(jestConfig, 'jest-environment-node');

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: 'pnpm',
  // Named, not discovered: under pnpm, @stryker-mutator/core does not see its
  // sibling plugins from its own node_modules.
  plugins: ['@stryker-mutator/jest-runner', '@stryker-mutator/typescript-checker'],
  testRunner: 'jest',
  // jest links ES modules with Node's vm modules, which need this flag
  // (jest.base.config.ts); StrykerJS passes it to its test runner processes.
  testRunnerNodeArgs: ['--experimental-vm-modules'],
  // jest.base.config.ts is the suite's own config (one project; jest.config.ts
  // splits it into lanes): ts-jest with tsconfig.jest.json, tests and sources
  // as ES modules. Only the group's tests are matched, and each run is
  // narrowed further to the tests related to the mutated file.
  jest: {
    projectType: 'custom',
    configFile: 'jest.base.config.ts',
    enableFindRelatedTests: true,
    config: {
      testMatch: group.tests.map((glob) => (glob.startsWith('!') ? glob : `<rootDir>/${glob}`)),
      maxWorkers: 1,
      testEnvironment,
    },
  },
  checkers: ['typescript'],
  tsconfigFile: group.tsconfig,
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  mutate: group.mutate,
  coverageAnalysis: 'perTest',
  // The machine is small and shared: one test process at a time.
  concurrency: 1,
  timeoutMS: 5_000,
  timeoutFactor: 1.5,
  incremental: true,
  incrementalFile: `reports/mutation/${name}/stryker-incremental.json`,
  reporters: ['clear-text', 'progress-append-only', 'html', 'json'],
  htmlReporter: { fileName: `reports/mutation/${name}/index.html` },
  jsonReporter: { fileName: `reports/mutation/${name}/mutation.json` },
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true },
  // StrykerJS wants high above low: a group that breaks at 90 or more (audit: 95) moves high up with it.
  thresholds: { high: Math.max(90, group.break + 1), low: group.break, break: group.break },
  tempDirName: `.stryker-tmp/${name}`,
  // Tests read docs/ and examples/ too: only generated output stays out of the sandbox.
  ignorePatterns: ['reports', '.bench-out', 'coverage'],
  cleanTempDir: true,
};
