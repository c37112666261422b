/**
 * `termgate audit …` loads the trail code only: never the policy engine
 * (packages/policy) nor the bash parser (web-tree-sitter, tree-sitter-bash).
 * Runs the built CLI (`packages/cli/dist/bin.js`) on a trail written by the
 * real gate and sink, with a preload that logs every module the process
 * loads (fixtures/module-log.mjs). `policy check` is the control: the same
 * log must name the engine and the parser there, so an empty or blind log
 * cannot pass. The OpenTelemetry SDK loads for `audit export` alone (its
 * own subpath, `@termgate/audit/otlp`, imported on demand). dependency-cruiser's `audit-commands-load-the-trail-only`
 * rule says the same statically.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { writeGeneratedTrail } from '../e2e/support/generated-trail.js';

const BIN = resolve(import.meta.dirname, '../../dist/bin.js');
const HOOK = pathToFileURL(resolve(import.meta.dirname, 'fixtures/module-log.mjs')).href;
const REPO_ROOT = resolve(import.meta.dirname, '../../../..');
const FORBIDDEN = [/\/packages\/policy\//, /\/node_modules\/(\.pnpm\/)?web-tree-sitter/, /tree-sitter-bash/];
/** The OpenTelemetry SDK: `audit export` only. */
const OTEL = /\/node_modules\/.*@opentelemetry[+/]/;

interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** The modules loaded, as URLs (file:, node:). */
  readonly modules: readonly string[];
}

describe('termgate audit loads no policy engine and no parser', () => {
  let dir: string;
  let trail: string;
  let runs = 0;

  function cli(args: readonly string[]): Run {
    runs += 1;
    const log = join(dir, `modules-${runs}.txt`);
    const result = spawnSync(process.execPath, ['--import', HOOK, BIN, ...args], {
      encoding: 'utf8',
      cwd: dir,
      env: { ...process.env, TERMGATE_MODULE_LOG: log },
    });
    const modules = existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
    return { status: result.status, stdout: result.stdout, stderr: result.stderr, modules };
  }

  const forbidden = (run: Run): string[] =>
    run.modules.filter((url) => FORBIDDEN.some((pattern) => pattern.test(url)));

  beforeAll(() => {
    if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`pnpm run build\` first`);
    dir = mkdtempSync(join(tmpdir(), 'termgate-audit-modules-'));
    trail = join(dir, 'audit.jsonl');
    writeGeneratedTrail(trail, 12);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('the log sees the engine and the parser when a command loads them (policy check)', () => {
    const run = cli(['policy', 'check', join(REPO_ROOT, 'policies/default.yaml')]);
    expect(run.stderr).not.toMatch(/module-log/);
    expect(run.modules.some((url) => /\/packages\/policy\/dist\//.test(url))).toBe(true);
    expect(run.modules.some((url) => /web-tree-sitter/.test(url))).toBe(true);
  });

  test.each([
    ['verify', (t: string) => ['audit', 'verify', t], /intact/],
    ['show', (t: string) => ['audit', 'show', t, '--decision', 'deny'], /rm -rf/],
    ['show --summary', (t: string) => ['audit', 'show', t, '--summary'], /no-rm/],
    ['report', (t: string) => ['audit', 'report', t, '--html', `${t}.html`], /intact/],
    ['keygen', (t: string) => ['audit', 'keygen', `${t}.key`], /private key/],
  ])('audit %s', (_name, args, expected) => {
    const run = cli(args(trail));
    expect(run.stderr).not.toMatch(/module-log/);
    expect(run.status).toBe(0);
    expect(`${run.stdout}${run.stderr}`).toMatch(expected);
    // The log works for this run: it saw the CLI and the trail package load.
    expect(run.modules.some((url) => url.endsWith('/packages/cli/dist/bin.js'))).toBe(true);
    expect(run.modules.some((url) => /\/packages\/audit\/dist\//.test(url))).toBe(true);
    expect(forbidden(run)).toEqual([]);
    expect(run.modules.filter((url) => OTEL.test(url))).toEqual([]);
  });

  test('audit export loads the OpenTelemetry SDK, and still no engine nor parser', () => {
    // Port 9 (discard) on loopback: nothing listens, the export fails (exit 1) after loading the SDK.
    const run = cli([
      'audit',
      'export',
      trail,
      '--otlp',
      'http://127.0.0.1:9/v1/logs',
      '--cursor',
      `${trail}.cursor`,
    ]);
    expect(run.stderr).not.toMatch(/module-log/);
    expect(run.status).toBe(1);
    expect(run.modules.some((url) => OTEL.test(url))).toBe(true);
    expect(forbidden(run)).toEqual([]);
  });
});
