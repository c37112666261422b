import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * CI redirects the test command's output to a log file. Biome colours its
 * diagnostics even then, unless told not to, and jest's code frames are
 * coloured whenever `CI` is set. Both would fill the log with escape codes.
 * These run the repository's own lint script and jest config on a file that
 * fails, with `CI=true` and output to a pipe, and read what a log would hold.
 */
const ROOT = resolve(import.meta.dirname, '../../../..');
const ESC = '\u001b';

describe('CI logs', () => {
  let dir: string;
  const env = (): NodeJS.ProcessEnv => {
    const { NO_COLOR: _noColor, FORCE_COLOR: _forceColor, ...rest } = process.env;
    return { ...rest, CI: 'true' };
  };
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'termgate-ci-colors-'));
    writeFileSync(join(dir, 'warned.ts'), 'export const value: any = 1;\n');
    writeFileSync(join(dir, 'fails.test.js'), "it('fails on purpose', () => { expect(1).toBe(2); });\n");
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the lint script prints its diagnostics without ANSI escape codes', () => {
    const lint: string = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.lint;
    const [tool, ...args] = lint.split(/\s+/);
    expect(tool).toBe('biome');
    expect(args.at(-1)).toBe('.');
    const run = spawnSync(
      join(ROOT, 'node_modules', '.bin', 'biome'),
      [...args.slice(0, -1), '--config-path', join(ROOT, 'biome.json'), 'warned.ts'],
      { cwd: dir, encoding: 'utf8', env: env() },
    );
    const log = `${run.stdout}${run.stderr}`;
    expect(log).toContain('noExplicitAny');
    expect(log).not.toContain(ESC);
  });

  it("jest's failure report, code frame included, has no ANSI escape codes", () => {
    const run = spawnSync(
      process.execPath,
      [
        '--experimental-vm-modules',
        join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'),
        '--config',
        join(ROOT, 'jest.config.ts'),
        '--roots',
        dir,
        '--testMatch',
        '**/fails.test.js',
      ],
      { cwd: ROOT, encoding: 'utf8', env: env() },
    );
    const log = `${run.stdout}${run.stderr}`;
    expect(run.status).toBe(1);
    expect(log).toContain('fails on purpose');
    expect(log).toContain('expect(1).toBe(2)');
    expect(log).not.toContain(ESC);
  });
});
