/**
 * Shipping the audit trail through a real rsyslog (Debian package `rsyslog`):
 * rsyslogd runs with the configuration of examples/rsyslog/termgate-audit.conf
 * (paths moved into a temp directory, with its own work directory and pid
 * file), tails the trail with imfile and writes what it ships to a file. Every
 * record must arrive exactly once, in order, across two rotations, a restart
 * of termgate (a real `termgate serve`) and a restart of rsyslog.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { listTrailDirectory, verifyAuditFile, verifyAuditTrail } from '@termgate/audit';
import { assertServerBuilt, REPO_ROOT, SERVER_BIN } from './support/wire-server.js';

const RSYSLOGD = '/usr/sbin/rsyslogd';
const EXAMPLE = path.join(REPO_ROOT, 'examples/rsyslog/termgate-audit.conf');
// The writer children are Node itself, which cannot run the .ts sources (Node 20): they load the built adapters.
const DIST_INDEX = path.join(REPO_ROOT, 'packages/audit/dist/adapters/index.js');
const WRITER = path.join(REPO_ROOT, 'packages/audit/test/adapters/fixtures/append-writer.mjs');

/**
 * Runs the audit package's writer fixture (a termgate writer process): a
 * server-start and `count` records. `rotate`: 'first' starts a new segment
 * with the first record; a number rotates at that many bytes.
 */
function writeRecords(
  file: string,
  count: number,
  label: string,
  rotate: 'first' | number = 0,
): Promise<void> {
  return new Promise((done, failed) => {
    const child = spawn(process.execPath, [WRITER, DIST_INDEX, file, String(count), label], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: {
        ...process.env,
        AUDIT_ROTATE_BYTES: rotate === 'first' ? '0' : String(rotate),
        AUDIT_ROTATE_FIRST: rotate === 'first' ? '1' : '0',
      },
    });
    child.on('error', failed);
    child.on('close', (code) => (code === 0 ? done() : failed(new Error(`writer exited with ${code}`))));
  });
}

/** A real `termgate serve` that runs `commands` through a real MCP client, then stops. Returns their exit codes. */
async function serve(
  file: string,
  commands: readonly string[],
  extra: readonly string[] = [],
): Promise<unknown[]> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [SERVER_BIN, 'serve', '--audit', file, '--log-level', 'silent', ...extra],
    cwd: REPO_ROOT,
    stderr: 'ignore',
  });
  const client = new Client({ name: 'termgate-e2e-rsyslog', version: '0.0.0' });
  await client.connect(transport);
  const exits: unknown[] = [];
  for (const command of commands) {
    const created = (await client.callTool({ name: 'terminal_create', arguments: { command } }))
      .structuredContent as { terminalId: string };
    const waited = await client.callTool({
      name: 'terminal_wait_for_exit',
      arguments: { terminalId: created.terminalId },
    });
    exits.push((waited.structuredContent as { exitCode?: unknown }).exitCode);
    await client.callTool({ name: 'terminal_release', arguments: { terminalId: created.terminalId } });
  }
  await client.close();
  return exits;
}

class Rsyslog {
  private child: ChildProcess | null = null;
  private log = '';

  constructor(
    private readonly conf: string,
    private readonly dir: string,
  ) {}

  start(): void {
    // -n: stay in the foreground (our child); -i: our own pid file; no /dev/log input is loaded.
    const child = spawn(RSYSLOGD, ['-n', '-f', this.conf, '-i', path.join(this.dir, 'rsyslogd.pid')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      this.log += chunk.toString();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      this.log += chunk.toString();
    });
    this.child = child;
  }

  /** SIGTERM, as systemd stops it, and wait until it exited. */
  async stop(): Promise<void> {
    const child = this.child;
    if (child === null || child.exitCode !== null) return;
    const exited = new Promise((done) => child.once('exit', done));
    child.kill('SIGTERM');
    await exited;
    this.child = null;
  }

  get output(): string {
    return this.log;
  }
}

function lines(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').slice(0, -1) : [];
}

async function waitForLines(file: string, count: number, rsyslog: Rsyslog): Promise<string[]> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const got = lines(file);
    if (got.length >= count) {
      // Give a duplicate the chance to show up before we compare.
      await new Promise((resolve) => setTimeout(resolve, 500));
      return lines(file);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(
    `rsyslog shipped ${lines(file).length} of ${count} records; its output:\n${rsyslog.output}`,
  );
}

function trailLines(dir: string): string[] {
  return listTrailDirectory(dir).flatMap(lines);
}

describe('rsyslog ships the audit trail (imfile)', () => {
  let dir: string;

  beforeAll(() => {
    // Never skipped: a machine without rsyslog fails here (install the Debian package `rsyslog`).
    expect(existsSync(RSYSLOGD)).toBe(true);
    assertServerBuilt();
    dir = mkdtempSync(path.join(tmpdir(), 'termgate-rsyslog-'));
  });
  afterAll(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  /** A trail directory and an rsyslogd configured by the example, in `dir/name`. */
  function setUp(name: string): { trail: string; file: string; shipped: string; rsyslog: Rsyslog } {
    const base = path.join(dir, name);
    const trail = path.join(base, 'trail');
    mkdirSync(trail, { recursive: true });
    mkdirSync(path.join(base, 'work'));
    const shipped = path.join(base, 'shipped', 'audit.jsonl');
    const conf = path.join(base, 'rsyslog.conf');
    const example = readFileSync(EXAMPLE, 'utf8');
    expect(example).toContain('/var/log/termgate/audit.*.jsonl');
    writeFileSync(
      conf,
      `global(workDirectory="${path.join(base, 'work')}")\n${example
        .replaceAll('/var/log/termgate/', `${trail}/`)
        .replaceAll('/var/log/termgate-shipped/audit.jsonl', shipped)}`,
    );
    return { trail, file: path.join(trail, 'audit.jsonl'), shipped, rsyslog: new Rsyslog(conf, base) };
  }

  test('every record exactly once, in order, across two rotations, a termgate restart and an rsyslog restart', async () => {
    const { trail, file, shipped, rsyslog } = setUp('paced');
    try {
      rsyslog.start();
      await new Promise((resolve) => setTimeout(resolve, 500));
      const shippedSoFar = async () => {
        const expected = trailLines(trail);
        expect(await waitForLines(shipped, expected.length, rsyslog)).toEqual(expected);
      };

      await writeRecords(file, 10, 'first', 'first');
      await shippedSoFar();
      // Rotation 1.
      await writeRecords(file, 10, 'second', 'first');
      await shippedSoFar();
      // termgate restarts: a real `termgate serve` continues the trail (non-ASCII and quotes too).
      await serve(file, ['echo "straße ✓"', 'true'], ['--audit-rotate-size', '1G']);
      await shippedSoFar();
      // rsyslog restarts; what is written while it is down is shipped when it is back.
      await rsyslog.stop();
      await writeRecords(file, 5, 'while-rsyslog-is-down');
      // Shipping never gates a command: with rsyslog down, termgate runs commands as usual.
      expect(await serve(file, ['echo shipper-down', 'exit 3'])).toEqual([0, 3]);
      rsyslog.start();
      await shippedSoFar();
      // Rotation 2, and a last server.
      await writeRecords(file, 10, 'third', 'first');
      await serve(file, ['echo last']);

      const files = listTrailDirectory(trail);
      expect(files).toHaveLength(3);
      const expected = trailLines(trail);
      expect(verifyAuditTrail(files)).toMatchObject({ ok: true, records: expected.length });
      const received = await waitForLines(shipped, expected.length, rsyslog);
      expect(received).toEqual(expected);
      // What arrived is itself the whole chain, byte for byte: it verifies as one file.
      expect(verifyAuditFile(shipped)).toMatchObject({ ok: true, records: expected.length });
    } finally {
      await rsyslog.stop();
    }
  });

  test('segments made faster than rsyslog reads them: every record once, each segment in order', async () => {
    const { trail, file, shipped, rsyslog } = setUp('burst');
    try {
      rsyslog.start();
      await new Promise((resolve) => setTimeout(resolve, 500));
      // A rotation every ~10 records, within milliseconds.
      await writeRecords(file, 60, 'burst', 2_500);
      const files = listTrailDirectory(trail);
      expect(files.length).toBeGreaterThan(4);
      const expected = trailLines(trail);
      const received = await waitForLines(shipped, expected.length, rsyslog);
      expect(received).toHaveLength(expected.length);
      expect([...received].sort()).toEqual([...expected].sort());
      for (const segment of files) {
        const mine = new Set(lines(segment));
        expect(received.filter((line) => mine.has(line))).toEqual(lines(segment));
      }
    } finally {
      await rsyslog.stop();
    }
  });
});
