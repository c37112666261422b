/**
 * A signed trail that was cut never verifies as intact: the real
 * `termgate acp-proxy` writes a signed trail (a checkpoint every 3 records),
 * and the real `termgate audit verify --public-key` is run on it cut at
 * every record boundary, on the trail of a proxy still running, and on the
 * trail of a proxy killed with SIGKILL.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { assertServerBuilt, defaultPolicyArgs, SERVER_BIN } from '../e2e/support/wire-server.js';
import { RawProxy, terminalRequest } from '../hostile/support/raw-proxy.js';

let dir: string;
let key: string;

beforeAll(() => {
  assertServerBuilt();
  dir = mkdtempSync(path.join('/var/tmp', 'termgate-trail-end-'));
  key = path.join(dir, 'signing-key');
  expect(cli(['audit', 'keygen', key]).status).toBe(0);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cli(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [SERVER_BIN, ...args], { encoding: 'utf8', timeout: 30_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const verify = (file: string, ...extra: string[]) =>
  cli(['audit', 'verify', file, '--public-key', `${key}.pub`, ...extra]);

function signedProxy(creates: number): RawProxy {
  const steps = Array.from({ length: creates }, (_, n) => [
    { send: terminalRequest(String(n + 1), 'create', { command: 'true' }) },
    { waitFor: `"id":${n + 1},` },
  ]).flat();
  return RawProxy.start(
    steps,
    [],
    [...defaultPolicyArgs(false), '--audit-signing-key', key, '--audit-checkpoint-every', '3'],
  );
}

/** The pids of `pid`'s children (Linux /proc). */
function childrenOf(pid: number): number[] {
  const text = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  return text === '' ? [] : text.split(' ').map(Number);
}

describe('audit verify --public-key on a trail acp-proxy wrote', () => {
  test('the complete trail is intact; cut at any record boundary it is open or cut after that seq (exit 3)', async () => {
    const proxy = signedProxy(3);
    await proxy.agentLine('"id":3,');
    const trail = proxy.auditPath;
    const copy = path.join(dir, 'cut.jsonl');
    // The stop: editor EOF; dispose waits for the exit, then removes the proxy's files (the copy stays).
    proxy.editorIn.end();
    expect(await proxy.exited).toBe(0);
    const lines = readFileSync(trail, 'utf8').trimEnd().split('\n');
    writeFileSync(copy, `${lines.join('\n')}\n`);
    await proxy.dispose();

    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const checkpoints = records.filter((r) => 'checkpoint' in r).map((r) => r.seq);
    expect(checkpoints.length).toBeGreaterThan(2);
    expect(records.at(-1)).toMatchObject({ checkpoint: { final: true } });
    const whole = verify(copy);
    expect([whole.status, whole.stdout]).toEqual([
      0,
      expect.stringMatching(/: intact, .*; ends with a final checkpoint \(its server stopped\)\n$/),
    ]);

    for (let kept = 1; kept < lines.length; kept += 1) {
      writeFileSync(copy, `${lines.slice(0, kept).join('\n')}\n`);
      const cut = verify(copy);
      const afterCheckpoint = checkpoints.includes(kept);
      expect([kept, afterCheckpoint, cut.status, cut.stdout]).toEqual([
        kept,
        afterCheckpoint,
        3,
        expect.stringMatching(new RegExp(`: OPEN OR CUT after seq ${kept}: `)),
      ]);
    }
  }, 120_000);

  test('a running proxy’s trail is open (exit 4, naming its pid); once the proxy is killed, open or cut (exit 3)', async () => {
    const proxy = signedProxy(1);
    try {
      await proxy.agentLine('"id":1,');
      const pid = proxy.child.pid!;
      const open = verify(proxy.auditPath, '--json');
      expect(open.status).toBe(4);
      expect(JSON.parse(open.stdout)).toMatchObject({
        ok: true,
        verdict: 'open',
        checkpoints: { final: false },
        running: [{ pid }],
      });
      expect(verify(proxy.auditPath).stdout).toMatch(
        new RegExp(`: OPEN, not final yet: a server that writes it still runs \\(pid ${pid} on `),
      );
      const agents = childrenOf(pid);
      proxy.child.kill('SIGKILL');
      await proxy.exited;
      for (const agent of agents) process.kill(agent, 'SIGKILL');
      const killed = verify(proxy.auditPath);
      expect([killed.status, killed.stdout]).toEqual([
        3,
        expect.stringMatching(/: OPEN OR CUT after seq \d+: /),
      ]);
    } finally {
      await proxy.dispose();
    }
  }, 60_000);
});

describe('acp-proxy when the stop record cannot be written', () => {
  test('it logs that with the last head and still exits with the agent’s code', async () => {
    const proxy = RawProxy.start(
      [
        { send: terminalRequest('1', 'create', { command: 'true' }) },
        { waitFor: '"id":1,' },
        { waitFor: '"method":"marker/exit"' },
        { exit: 7 },
      ],
      [],
      [...defaultPolicyArgs(false), '--log-format', 'pretty'],
    );
    try {
      await proxy.agentLine('"id":1,');
      const lines = readFileSync(proxy.auditPath, 'utf8').trimEnd().split('\n');
      const last = JSON.parse(lines.at(-1)!) as { seq: number; hash: string };
      // The trail is moved away under the running proxy: its next record (the stop) fails.
      renameSync(proxy.auditPath, `${proxy.auditPath}.moved`);
      proxy.editorIn.write('{"jsonrpc":"2.0","method":"marker/exit","params":{}}\n');
      expect(await proxy.exited).toBe(7);
      expect(proxy.stderr).toContain(`the audit trail's stop record was not written: `);
      expect(proxy.stderr).toContain(`last head ${last.seq}:${last.hash}`);
      expect(proxy.stderr).not.toMatch(/AuditError|Uncaught|at .*\.js:\d+/);
    } finally {
      await proxy.dispose();
    }
  }, 60_000);
});
