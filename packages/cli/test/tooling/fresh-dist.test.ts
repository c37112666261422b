import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { freshDist, staleBuild } from '../../../../test-support/fresh-dist.js';

/**
 * The freshness check of the lanes that run built files
 * (test-support/fresh-dist.ts), as docs/TESTING.md states it. (That every
 * test is in exactly one lane is scripts/check-test-lanes.mjs.)
 */
describe('the freshness check of built files', () => {
  let root: string;
  const at = (path: string, seconds: number, text = 'x'): void => {
    const file = join(root, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    utimesSync(file, seconds, seconds);
  };
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'termgate-fresh-dist-'));
    for (const name of ['cli', 'policy']) {
      at(`packages/${name}/tsconfig.json`, 1_000, '{}');
      at(`packages/${name}/src/index.ts`, 1_000);
      at(`packages/${name}/src/deep/module.ts`, 1_000);
      at(`packages/${name}/dist/.tsbuildinfo`, 2_000);
    }
    at('packages/cli/dist/bin.js', 3_000);
    // Not a package (no tsconfig.json): ignored.
    at('packages/notes/src/new.ts', 9_000);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('passes a tree built after its last change', () => {
    expect(staleBuild(root)).toBeUndefined();
  });

  it('names a source, however deep, that changed after its package was built', () => {
    at('packages/policy/src/deep/module.ts', 2_500);
    expect(staleBuild(root)).toBe(
      'packages/policy/src/deep/module.ts is newer than packages/policy/dist/.tsbuildinfo',
    );
  });

  it('names a data file under src too (the policy schema ships from there)', () => {
    at('packages/policy/src/schema/policy.schema.json', 2_500);
    expect(staleBuild(root)).toMatch(/^packages\/policy\/src\/schema\/policy.schema.json is newer/);
  });

  it('names a package never built', () => {
    rmSync(join(root, 'packages/policy/dist'), { recursive: true });
    expect(staleBuild(root)).toBe(
      'packages/policy/dist/.tsbuildinfo is missing: the package was never built',
    );
  });

  it('names a bundle older than the build it bundles (tsc ran, the bundle did not)', () => {
    at('packages/cli/dist/.tsbuildinfo', 4_000);
    expect(staleBuild(root)).toBe(
      'packages/cli/dist/bin.js is older than packages/cli/dist/.tsbuildinfo (tsc ran, the bundle did not)',
    );
    rmSync(join(root, 'packages/cli/dist/bin.js'));
    expect(staleBuild(root)).toBe('packages/cli/dist/bin.js is missing: the CLI was never bundled');
  });

  it("passes this repository's build, which the lanes that run built files just checked", () => {
    expect(() => freshDist(resolve(import.meta.dirname, '../../../..'))).not.toThrow();
  });
});
