import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** The README's `pnpm start` transcript (after the build), run as it ships. */
const QUICKSTART = resolve(import.meta.dirname, '..', '..', '..', '..', 'scripts', 'quickstart.mjs');

describe('scripts/quickstart.mjs', () => {
  let tmp: string;
  beforeEach(() => {
    // Its own TMPDIR: what the quick start leaves behind is exactly what is left in it.
    tmp = mkdtempSync(join(tmpdir(), 'termgate-quickstart-test-'));
  });
  afterEach(() => rmSync(tmp, { recursive: true, force: true }));

  const quickstart = (...args: string[]) =>
    spawnSync(process.execPath, [QUICKSTART, ...args], {
      env: { ...process.env, TMPDIR: tmp },
      encoding: 'utf8',
      timeout: 120_000,
    });

  test('runs the transcript and leaves no termgate-quickstart-* folder behind', () => {
    const result = quickstart();
    expect(result.stderr).not.toMatch(/Error/);
    expect(result.status).toBe(0);
    // It did use a folder of its own for the trail, and verified it.
    expect(result.stdout).toContain(`$ termgate audit verify ${tmp}/termgate-quickstart-`);
    expect(result.stdout).toMatch(/intact/);
    expect(readdirSync(tmp)).toEqual([]);
  }, 150_000);

  test('cleans up when a step fails (the server refuses its arguments)', () => {
    const result = quickstart('--no-such-option');
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('termgate serve: unknown option --no-such-option');
    expect(readdirSync(tmp)).toEqual([]);
  }, 150_000);
});
