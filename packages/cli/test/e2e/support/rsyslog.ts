/**
 * Real rsyslog daemons and trail writers for the shipping tests
 * (rsyslog-shipping.test.ts: imfile; rsyslog-relp.test.ts: imfile → omrelp →
 * imrelp): an rsyslogd in the foreground with its own configuration and pid
 * file, the audit package's writer fixture, and a real `termgate serve`
 * driven by a real MCP client.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { REPO_ROOT, SERVER_BIN } from './wire-server.js';

export const RSYSLOGD = '/usr/sbin/rsyslogd';
// The writer children are Node itself, which cannot run the .ts sources (Node 20): they load the built adapters.
const DIST_INDEX = path.join(REPO_ROOT, 'packages/audit/dist/adapters/index.js');
const WRITER = path.join(REPO_ROOT, 'packages/audit/test/adapters/fixtures/append-writer.mjs');

/**
 * Runs the audit package's writer fixture (a termgate writer process): a
 * server-start and `count` records. `rotate`: 'first' starts a new segment
 * with the first record; a number rotates at that many bytes.
 */
export function writeRecords(
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
export async function serve(
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

export class Rsyslog {
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

export function lines(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').slice(0, -1) : [];
}

export async function waitForLines(file: string, count: number, rsyslog: Rsyslog): Promise<string[]> {
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
