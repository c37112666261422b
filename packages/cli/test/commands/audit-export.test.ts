/**
 * `termgate audit export` (the built CLI) against an OTLP/HTTP receiver in
 * the test that decodes the protobuf (packages/audit/test/support/otlp-receiver.ts),
 * on a trail written by the real gate and sink (support/generated-trail.ts:
 * every create sets `NPM_TOKEN=secret`, terminal 42's command carries
 * `needle-42`). And `audit report`'s redaction, checked on the HTML bytes.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { sha256Hex } from '@termgate/audit';
import { OtlpReceiver } from '../../../audit/test/support/otlp-receiver.js';
import { writeGeneratedTrail } from '../e2e/support/generated-trail.js';

const BIN = resolve(import.meta.dirname, '../../dist/bin.js');
const run = promisify(execFile);

interface Result {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function cli(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<Result> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], {
      env: { ...process.env, OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: '', OTEL_EXPORTER_OTLP_ENDPOINT: '', ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

async function until(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 45_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const trailLines = (file: string): Record<string, unknown>[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('termgate audit export --otlp', () => {
  let dir: string;
  let trail: string;
  let receiver: OtlpReceiver;
  let follower: ChildProcess | null = null;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'termgate-audit-export-'));
    trail = join(dir, 'audit.jsonl');
    writeGeneratedTrail(trail, 50);
    receiver = new OtlpReceiver();
    await receiver.start();
  });

  afterEach(async () => {
    follower?.kill('SIGKILL');
    follower = null;
    await receiver.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('exports every record once, redacted on the wire, and resumes from its cursor', async () => {
    const first = await cli(['audit', 'export', trail, '--otlp', receiver.url, '--redact-command', 'hash']);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const records = trailLines(trail);
    expect(first.stdout).toBe(`exported ${records.length} records; cursor at seq ${records.length}\n`);
    expect(receiver.seqs()).toEqual(records.map((r) => r.seq));
    const wire = Buffer.concat(receiver.bodies).toString('latin1');
    expect(wire).not.toContain('needle-42');
    expect(wire).not.toContain('rm -rf');
    expect(wire).not.toContain('--shard');
    // Environment values never reach the trail, so never the export; the names do.
    expect(wire).not.toContain('secret');
    expect(wire).toContain('NPM_TOKEN');
    const needle = records.find((r) => JSON.stringify(r).includes('needle-42'))!;
    const needleLog = receiver.logs.find((log) => log.attributes['termgate.seq'] === needle.seq)!;
    const line = (needle.process as { command_line: string }).command_line;
    expect(needleLog.attributes['process.command_line']).toBe(`sha256:${sha256Hex(line)}`);
    expect(needleLog.resource['service.version']).toBe('0.1.0');

    const cursor = join(dir, 'audit.otlp-cursor');
    expect(statSync(cursor).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(cursor, 'utf8'))).toEqual({
      seq: records.length,
      hash: records.at(-1)!.hash,
    });

    // More records, another run: only those are sent.
    writeGeneratedTrail(trail, 5);
    const again = await cli(['audit', 'export', trail, '--otlp', receiver.url]);
    expect(again.code).toBe(0);
    expect(receiver.seqs()).toEqual(trailLines(trail).map((r) => r.seq));
  });

  test('a collector that is down: exit 1, cursor kept; --follow delivers everything once it is back', async () => {
    const port = receiver.port;
    const url = receiver.url;
    await receiver.stop();
    const down = await cli(['audit', 'export', dir, '--otlp', url]);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/termgate audit export: .*; cursor at seq 0/);

    follower = spawn(process.execPath, [BIN, 'audit', 'export', dir, '--follow', '--interval', '100ms'], {
      env: { ...process.env, OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    follower.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    await until('the follower to report the failing collector', () => /retrying/.test(stderr));
    await receiver.start(port);
    const count = trailLines(trail).length;
    await until('every record at the collector', () => receiver.logs.length >= count);
    // New records while following.
    writeGeneratedTrail(trail, 3);
    const total = trailLines(trail).length;
    await until('the new records at the collector', () => receiver.logs.length >= total);
    const exited = new Promise<number | null>((r) => follower!.once('exit', (code) => r(code)));
    follower.kill('SIGTERM');
    expect(await exited).toBe(0);
    follower = null;
    expect(receiver.seqs()).toEqual(trailLines(trail).map((r) => r.seq));
    expect(JSON.parse(readFileSync(join(dir, 'otlp-cursor'), 'utf8')).seq).toBe(total);
  });

  test('usage errors: no endpoint, a bad --redact-command, a bad --header', async () => {
    expect((await cli(['audit', 'export', trail])).stderr).toMatch(/needs --otlp URL/);
    const bad = await cli(['audit', 'export', trail, '--otlp', receiver.url, '--redact-command', 'cut:x']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/keep, hash or cut:N/);
    const header = await cli(['audit', 'export', trail, '--otlp', receiver.url, '--header', 'novalue']);
    expect(header.code).toBe(2);
    expect(receiver.logs).toEqual([]);
  });
});

describe('termgate audit report --redact-command / --redact-args', () => {
  let dir: string;
  let trail: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'termgate-report-redact-'));
    trail = join(dir, 'audit.jsonl');
    writeGeneratedTrail(trail, 50);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('unredacted, the report shows the commands (the control)', async () => {
    const out = join(dir, 'plain.html');
    expect((await cli(['audit', 'report', trail, '--html', out])).code).toBe(0);
    const html = readFileSync(out, 'utf8');
    expect(html).toContain('needle-42');
    expect(html).toContain('--shard');
  });

  test('hash: no command text in the HTML, each line as its sha256; the trail still verifies', async () => {
    const out = join(dir, 'hash.html');
    const result = await cli(['audit', 'report', trail, '--html', out, '--redact-command', 'hash']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/intact/);
    const html = readFileSync(out, 'utf8');
    expect(html).not.toContain('needle-42');
    expect(html).not.toContain('--shard');
    expect(html).not.toContain('build-');
    const needle = trailLines(trail).find((r) => JSON.stringify(r).includes('needle-42'))!;
    expect(html).toContain(`sha256:${sha256Hex((needle.process as { command_line: string }).command_line)}`);
  });

  test('cut:N keeps the first N characters of each command', async () => {
    const out = join(dir, 'cut.html');
    expect((await cli(['audit', 'report', trail, '--html', out, '--redact-command', 'cut:3'])).code).toBe(0);
    const html = readFileSync(out, 'utf8');
    expect(html).not.toContain('needle-42');
    expect(html).not.toContain('--shard');
    expect(html).toContain('npm…');
  });

  test('a bad value is a usage error and writes no report', async () => {
    const out = join(dir, 'bad.html');
    const result = await cli(['audit', 'report', trail, '--html', out, '--redact-command', 'md5']);
    expect(result.code).toBe(2);
    expect(() => statSync(out)).toThrow();
  });
});
