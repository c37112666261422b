import * as vm from 'node:vm';
import type { Config } from 'jest';

/**
 * The options every test shares, as one jest project: jest.config.ts splits
 * the suite into lanes (projects) of this config, and StrykerJS
 * (stryker.config.mjs) runs it with its own testMatch.
 *
 * Tests run as ES modules, like production: ts-jest transpiles the
 * TypeScript (not type-checked: `tsc -b` does that) to ESM (`useESM`,
 * tsconfig.jest.json) and jest links it with Node's `vm` modules
 * (https://jestjs.io/docs/ecmascript-modules), which exist only when the
 * process runs with `--experimental-vm-modules`: the package scripts, `pnpm
 * jest`, scripts/test-on-node.mjs and StrykerJS (`testRunnerNodeArgs`) pass
 * it. Dependencies load as Node loads them, untransformed. Workspace imports
 * (`@termgate/x`, `@termgate/x/adapters` and `@termgate/termhost/sandbox`)
 * resolve to each package's `src`.
 */

/**
 * Without the flag every ESM test file would fail on its own, each with the
 * same puzzle; fail once, up front, saying how to run jest.
 */
if (!('SourceTextModule' in vm)) {
  throw new Error(
    'jest must run with node --experimental-vm-modules (the tests are ES modules): ' +
      'npx -y pnpm@12.4.2 jest <args>, or node --experimental-vm-modules node_modules/jest/bin/jest.js <args>',
  );
}

/**
 * Jest's code frames are coloured by picocolors, which treats any `CI`
 * environment as a colour terminal. A log file is not one: unless the output
 * is a terminal, turn colours off (https://no-color.org) for jest and for the
 * workers it starts.
 */
if (!process.stderr.isTTY) process.env.NO_COLOR ??= '1';

const config: Config = {
  testEnvironment: 'node',
  roots: ['<rootDir>/packages'],
  // The staged `termgate` package (scripts/pack-cli.mjs) repeats packages/cli's name.
  modulePathIgnorePatterns: ['<rootDir>/packages/cli/pack/'],
  testMatch: ['**/test/**/*.test.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.jest.json', useESM: true }],
  },
  moduleNameMapper: {
    '^@termgate/([a-z-]+)/adapters$': '<rootDir>/packages/$1/src/adapters/index.ts',
    '^@termgate/audit/otlp$': '<rootDir>/packages/audit/src/adapters/otlp/index.ts',
    '^@termgate/termhost/sandbox$': '<rootDir>/packages/termhost/src/sandbox/index.ts',
    '^@termgate/([a-z-]+)$': '<rootDir>/packages/$1/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  // A bound on a failure, not a measurement: generous, for loaded machines.
  testTimeout: 60_000,
  maxWorkers: 2,
};

export default config;
