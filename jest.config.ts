import type { Config } from 'jest';

/**
 * One jest run covers every package. Tests are TypeScript, transpiled (not
 * type-checked: `tsc -b` does that) to CommonJS by ts-jest. inversify 8 and
 * its @inversifyjs packages ship ESM only, so they are transpiled too.
 * Workspace imports resolve to each package's `src`: `@termgate/<name>` to
 * its index.ts, `@termgate/<name>/adapters` to its adapters/index.ts.
 */
const config: Config = {
  testEnvironment: 'node',
  roots: ['<rootDir>/packages'],
  testMatch: ['**/test/**/*.test.ts'],
  transform: {
    '^.+\\.[cm]?[tj]s$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.jest.json' }],
  },
  transformIgnorePatterns: ['/node_modules/(?!(\\.pnpm/)?(inversify|@inversifyjs))'],
  moduleNameMapper: {
    '^@termgate/([a-z-]+)$': '<rootDir>/packages/$1/src/index.ts',
    '^@termgate/([a-z-]+)/adapters$': '<rootDir>/packages/$1/src/adapters/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  testTimeout: 30_000,
  maxWorkers: 2,
};

export default config;
