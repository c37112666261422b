/**
 * `termgate serve` with a rotating, signed audit trail, driven by a real MCP
 * client; the trail is then checked with the real `termgate audit verify`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { listTrailDirectory } from '@termgate/audit';
import { assertServerBuilt, REPO_ROOT, SERVER_BIN } from './support/wire-server.js';

function cli(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [SERVER_BIN, ...args], { encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('serve with --audit-rotate-size and --audit-signing-key', () => {
  let dir: string;
  let trail: string;
  let key: string;

  beforeAll(() => {
    assertServerBuilt();
    dir = mkdtempSync(path.join(tmpdir(), 'termgate-e2e-trail-'));
    trail = path.join(dir, 'trail');
    key = path.join(dir, 'checkpoint-key');
    expect(cli(['audit', 'keygen', key]).status).toBe(0);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('the trail rotates while serving, is signed at stop, and verifies as one chain', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        SERVER_BIN,
        'serve',
        '--audit',
        path.join(trail, 'audit.jsonl'),
        '--audit-rotate-size',
        '3k',
        '--audit-signing-key',
        key,
        // More than the records written: the one checkpoint is the final one, written at stop.
        '--audit-checkpoint-every',
        '1000',
      ],
      cwd: REPO_ROOT,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const client = new Client({ name: 'termgate-e2e-trail', version: '0.0.0' });
    await client.connect(transport);
    for (let n = 0; n < 6; n += 1) {
      const created = (
        await client.callTool({ name: 'terminal_create', arguments: { command: `echo run-${n}` } })
      ).structuredContent as { terminalId: string };
      await client.callTool({
        name: 'terminal_wait_for_exit',
        arguments: { terminalId: created.terminalId },
      });
      await client.callTool({ name: 'terminal_release', arguments: { terminalId: created.terminalId } });
    }
    const refused = await client.callTool({ name: 'terminal_create', arguments: { command: 'sudo id' } });
    expect(refused.isError).toBe(true);
    await client.close();

    const files = readdirSync(trail).filter((name) => !name.endsWith('.lock'));
    expect(files.length).toBeGreaterThan(2);
    const verdict = cli(['audit', 'verify', trail, '--public-key', `${key}.pub`]);
    expect(verdict.stderr).toBe('');
    expect(verdict.stdout).toMatch(
      /intact, \d+ records in \d+ files .*; signed through seq \d+ \(\d+ checkpoints\); ends with a final checkpoint \(its server stopped\)\n$/,
    );
    expect(verdict.status).toBe(0);
    // audit show: the refused create is marked refused, with the recorded reason; created terminals keep their ids.
    const [denied, ...others] = cli(['audit', 'show', trail, '--json', '--decision', 'deny'])
      .stdout.trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(others).toEqual([]);
    expect(denied).toMatchObject({
      event: { action: 'terminal-create' },
      process: { command_line: 'sudo id' },
    });
    const table = cli(['audit', 'show', trail]).stdout.trimEnd().split('\n');
    const column = (name: string) => table[0]!.indexOf(name);
    const refusedRow = table.find((line) => line.includes('sudo id'))!;
    expect(refusedRow.slice(column('TERMINAL')).startsWith('(refused) ')).toBe(true);
    expect(refusedRow).not.toContain(denied.termgate.terminal_id.slice(0, 8));
    expect(refusedRow.slice(column('REASON'))).toBe(
      denied.event.reason.length <= 80 ? denied.event.reason : `${denied.event.reason.slice(0, 79)}…`,
    );
    const createdRow = table.find((line) => line.includes('echo run-0'))!;
    expect(createdRow.slice(column('TERMINAL'))).toMatch(/^[0-9a-f]{8} /);
    // The stop record is the last one a checkpoint signs.
    const active = listTrailDirectory(trail).flatMap((file) =>
      readFileSync(file, 'utf8').trimEnd().split('\n'),
    );
    const last = JSON.parse(active[active.length - 1]!);
    const beforeLast = JSON.parse(active[active.length - 2]!);
    expect(beforeLast.event.action).toBe('server-stop');
    expect(last).toMatchObject({
      event: { action: 'audit-checkpoint' },
      checkpoint: { seq: beforeLast.seq, final: true },
    });
    // The head logged at stop (an external anchor) is the trail's last record: the final checkpoint.
    const closed = stderr
      .split('\n')
      .filter((line) => line.includes('audit trail closed'))
      .map((line) => JSON.parse(line) as { auditHead: string });
    expect(closed.map((entry) => entry.auditHead)).toEqual([`${last.seq}:${last.hash}`]);
  });

  test('a signing key readable by others refuses the start: nothing is served', async () => {
    const loose = path.join(dir, 'loose-key');
    expect(cli(['audit', 'keygen', loose]).status).toBe(0);
    chmodSync(loose, 0o644);
    // stdin stays open, as a client's would: serve stops because it refused, not because of EOF.
    const child = spawn(
      process.execPath,
      [SERVER_BIN, 'serve', '--audit', path.join(dir, 'loose.jsonl'), '--audit-signing-key', loose],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const status = await new Promise<number | null>((done) => child.on('close', done));
    expect(stderr).toMatch(/refusing to start: signing key .* is accessible by group or others/);
    expect(status).toBe(1);
    expect(stdout).toBe('');
  });

  test('bad rotation and checkpoint options are usage errors', () => {
    for (const args of [
      ['--audit-rotate-size', 'big'],
      ['--audit-rotate-age', '1 hour'],
      ['--audit-checkpoint-every', '5'],
    ]) {
      const result = spawnSync(process.execPath, [SERVER_BIN, 'serve', ...args], {
        input: '',
        encoding: 'utf8',
      });
      expect(result.status).toBe(2);
      expect(result.stderr).toMatch(
        /^termgate serve: .*--audit.*\nRun "termgate serve --help" for usage\.\n$/,
      );
    }
  });
});
