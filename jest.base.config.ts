import type { Config } from 'jest';

/**
 * The options every test shares, as one jest project: jest.config.ts splits
 * the suite into lanes (projects) of this config, and StrykerJS
 * (stryker.config.mjs) runs it with its own testMatch.
 *
 * Tests are TypeScript, transpiled (not type-checked: `tsc -b` does that) to
 * CommonJS by ts-jest. inversify 8 and its @inversifyjs packages ship ESM
 * only, so they are transpiled too (jest loads CommonJS). Workspace imports
 * (`@termgate/x`, `@termgate/x/adapters` and `@termgate/termhost/sandbox`) resolve to each package's `src`.
 */

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
  transform: {
    '^.+\\.[cm]?[tj]s$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.jest.json' }],
  },
  transformIgnorePatterns: ['/node_modules/(?!(\\.pnpm/)?(inversify|@inversifyjs))'],
  moduleNameMapper: {
    '^@termgate/([a-z-]+)/adapters$': '<rootDir>/packages/$1/src/adapters/index.ts',
    '^@termgate/termhost/sandbox$': '<rootDir>/packages/termhost/src/sandbox/index.ts',
    '^@termgate/([a-z-]+)$': '<rootDir>/packages/$1/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  // A bound on a failure, not a measurement: generous, for loaded machines.
  testTimeout: 60_000,
  maxWorkers: 2,
};

export default config;
