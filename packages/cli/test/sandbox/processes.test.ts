/**
 * Processes that leave their terminal's process group (`setsid`, a double
 * fork, a detached child) escape `kill` without the sandbox. With it, each
 * terminal is a pid namespace: they end with the terminal, on kill, on
 * release and on the server's shutdown. Checked on the host's /proc.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { pause, SERVER_BIN, type WireServer } from '../e2e/support/wire-server.js';
import {
  call,
  makeWorld,
  processesWith,
  type SandboxWorld,
  serveIn,
  start,
} from './support/sandbox-fixture.js';

const section = (mode: 'required' | 'off'): string =>
  [`  mode: ${mode}`, '  filesystem:', '    privateTmp: false', '  network: none'].join('\n');

/** Lines that leave a `sleep <marker>` running outside the group, then keep the leader busy. */
const ESCAPES: ReadonlyArray<readonly [string, (marker: string) => string]> = [
  ['setsid', (m) => `setsid sleep ${m} & sleep 1000`],
  ['setsid -f', (m) => `setsid -f sleep ${m}; sleep 1000`],
  ['a double fork into a new session', (m) => `bash -c 'bash -c "setsid sleep ${m} &" &'; sleep 1000`],
  [
    'a node child with detached: true',
    (m) =>
      `node -e "require('child_process').spawn('sleep', ['${m}'], {detached: true, stdio: 'ignore'}).unref()"; sleep 1000`,
  ],
  [
    'a python fork + setsid',
    (m) => `python3 -c "import os,time
if os.fork() == 0:
    os.setsid(); os.execvp('sleep', ['sleep', '${m}'])"; sleep 1000`,
  ],
];

let counter = 0;
const marker = (): string => `${4000 + (process.pid % 1000)}.${Date.now() % 100000}${counter++}`;

async function until(check: () => boolean, timeoutMs = 20_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await pause(50);
  }
  return check();
}

function killAll(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

// Without the sandbox, escapes are the cgroup spawner's to stop (hostile/session-escape-*.test.ts); here, the sandbox's.
describe.each([['required', true]] as const)('session escapes, sandbox.mode: %s', (mode, confined) => {
  let w: SandboxWorld;
  let server: WireServer;

  beforeAll(() => {
    w = makeWorld({ sandbox: section(mode) });
    server = serveIn(w);
  });
  afterAll(async () => {
    await server.dispose();
    w.dispose();
  });

  test.each(ESCAPES.map(([name, line]) => [name, line] as const))(
    `%s ${confined ? 'is gone' : 'survives'} after terminal_kill and release`,
    async (_name, line) => {
      const m = marker();
      const id = await start(server, line(m));
      expect(await until(() => processesWith(`sleep ${m}`).length > 0)).toBe(true);
      await call(server, 'terminal_kill', { terminalId: id });
      await call(server, 'terminal_release', { terminalId: id });
      const gone = await until(() => processesWith(`sleep ${m}`).length === 0, confined ? 20_000 : 3_000);
      const survivors = processesWith(`sleep ${m}`);
      killAll(survivors);
      expect(gone).toBe(confined);
    },
  );
});

describe('with the sandbox', () => {
  let w: SandboxWorld;

  beforeEach(() => {
    w = makeWorld({ sandbox: section('required') });
  });
  afterEach(() => w.dispose());

  test('a setsid child ends with the command that started it, and the exit is reported', async () => {
    const server = serveIn(w);
    try {
      const m = marker();
      const id = await start(server, `setsid sleep ${m} & sleep 1; echo done`);
      expect(await until(() => processesWith(`sleep ${m}`).length > 0)).toBe(true);
      const waited = await call(server, 'terminal_wait_for_exit', { terminalId: id, timeoutSeconds: 20 });
      const status = (waited.result as { structuredContent: unknown }).structuredContent;
      expect(status).toMatchObject({ running: false, exitCode: 0 });
      // The namespace ended with the command: nothing is left, even while the kernel tears it down.
      expect(status).not.toHaveProperty('processesLeft');
      expect(await until(() => processesWith(`sleep ${m}`).length === 0)).toBe(true);
    } finally {
      await server.dispose();
    }
  });

  test.each([
    ['stdin EOF', (s: WireServer) => s.closeStdin()],
    [
      'SIGTERM',
      (s: WireServer) => {
        s.child.kill('SIGTERM');
        return s.untilExit();
      },
    ],
  ])('escaped processes are gone after the server stops on %s', async (_name, stop) => {
    const server = serveIn(w);
    const markers = ESCAPES.map(() => marker());
    for (const [i, [, line]] of ESCAPES.entries()) await start(server, line(markers[i]!));
    expect(await until(() => markers.every((m) => processesWith(`sleep ${m}`).length > 0))).toBe(true);
    await stop(server);
    const gone = await until(() => markers.every((m) => processesWith(`sleep ${m}`).length === 0));
    killAll(markers.flatMap((m) => processesWith(`sleep ${m}`)));
    expect(gone).toBe(true);
  });
});

describe('sandbox.mode: required where the sandbox cannot run', () => {
  let w: SandboxWorld;

  beforeAll(() => {
    w = makeWorld({ sandbox: section('required') });
  });
  afterAll(() => w.dispose());

  test('serve exits 1 before any command runs, and says what to install', async () => {
    const server = serveIn(w, { PATH: '/nonexistent' });
    const proof = path.join(w.workspace, 'ran.txt');
    // Sent while the gate starts: it must never run (it may get an error, or no answer before the exit).
    server.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'terminal_create', arguments: { command: `echo ran > ${proof}` } },
    });
    const exit = await server.untilExit();
    expect(exit.code).toBe(1);
    const answer = server.messagesSince(0).find((m) => m.id === 1);
    if (answer !== undefined) expect((answer.result as { isError?: boolean }).isError).toBe(true);
    expect(existsSync(proof)).toBe(false);
    expect(server.stderr).toMatch(/bwrap was not found on PATH.*apt-get install bubblewrap/s);
  });

  test('without user namespaces, sandbox.tier: namespaces exits 1 and says what to change', async () => {
    // `unshare --user` without a uid map is such a place: bwrap cannot create a user namespace in it.
    // (Under `tier: auto` the landlock tier serves there: landlock-tier.test.ts.)
    const { chmodSync, mkdtempSync } = await import('node:fs');
    const nw = makeWorld({ sandbox: `${section('required')}\n  tier: namespaces` });
    const state = mkdtempSync('/var/tmp/termgate-nouserns-');
    chmodSync(state, 0o777);
    const child = spawn(
      'unshare',
      [
        '--user',
        process.execPath,
        SERVER_BIN,
        'serve',
        '--policy',
        nw.policyPath,
        '--audit',
        path.join(state, 'a.jsonl'),
      ],
      { cwd: nw.workspace, env: { ...process.env, HOME: nw.home }, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(stderr).toMatch(/bubblewrap cannot create a sandbox here/);
    expect(stderr).toMatch(/unprivileged_userns_clone/);
    expect(code).toBe(1);
    nw.dispose();
  });

  test('acp-proxy exits 1 before the agent is spawned', async () => {
    const proof = path.join(w.workspace, 'agent-started.txt');
    const child = spawn(
      process.execPath,
      [
        SERVER_BIN,
        'acp-proxy',
        '--policy',
        w.policyPath,
        '--audit',
        w.auditPath,
        '--',
        process.execPath,
        '-e',
        `require('fs').writeFileSync(${JSON.stringify(proof)}, 'x')`,
      ],
      {
        cwd: w.workspace,
        env: { ...process.env, HOME: w.home, PATH: '/nonexistent' },
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(existsSync(proof)).toBe(false);
    expect(stderr).toMatch(/apt-get install bubblewrap/);
  });
});
