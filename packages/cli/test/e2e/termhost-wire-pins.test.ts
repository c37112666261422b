/**
 * Behaviours of the host seen through the built server (`serve`, raw JSON
 * lines), each pinned because a plausible bug would otherwise go unnoticed:
 * what `terminal_kill` returns, what a wait on an unknown id answers while
 * the gate is still starting, that a refused create in its command + args
 * form runs nothing, and the exact texts a model reads in failed tool results.
 */
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import {
  DEFAULT_POLICY,
  modern,
  pause,
  removeAuditFiles,
  structuredResult,
  toolErrorText,
  unsandboxedDefaultPolicy,
  type WireMessage,
  WireServer,
} from './support/wire-server.js';

// realpath: the policy compares a request's resolved cwd with the server's.
const scratch = realpathSync(mkdtempSync(path.join(tmpdir(), 'termgate-e2e-pins-')));
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
  removeAuditFiles();
});

/** The unsandboxed default policy, at most two terminals, and `touch` refused by a rule of its own. */
function pinsPolicy(): string {
  const file = path.join(scratch, 'pins-policy.yaml');
  const text = readFileSync(unsandboxedDefaultPolicy(), 'utf8')
    .replace(/^ {2}maxTerminals: \d+$/m, '  maxTerminals: 2')
    .replace(
      /^rules:\n/m,
      'rules:\n  - id: pins-no-touch\n    decision: deny\n    reason: touch is refused here\n    program: touch\n',
    );
  if (!text.includes('maxTerminals: 2') || !text.includes('pins-no-touch'))
    throw new Error('could not derive the test policy');
  writeFileSync(file, text);
  return file;
}

function callTool(server: WireServer, name: string, args: Record<string, unknown>): Promise<WireMessage> {
  return server.request('tools/call', modern({ name, arguments: args }));
}

async function create(server: WireServer, args: Record<string, unknown>): Promise<string> {
  const { terminalId } = structuredResult(
    await callTool(server, 'terminal_create', { waitSeconds: 0, ...args }),
  );
  if (typeof terminalId !== 'string') throw new Error(`no terminalId: ${JSON.stringify(terminalId)}`);
  return terminalId;
}

const UNKNOWN_ID =
  'Unknown terminal id: it was never created here, was released, or had exited and was freed to make room for newer commands. Start a new command with terminal_create. (No terminal no-such-terminal)';

describe.each([
  ['without the sandbox', false],
  ['in the sandbox', true],
])('terminal_kill %s', (_label, sandboxed) => {
  let server: WireServer;
  beforeAll(() => {
    server = WireServer.start(['--policy', sandboxed ? DEFAULT_POLICY : unsandboxedDefaultPolicy()], {
      cwd: scratch,
    });
  });
  afterAll(() => server.dispose());

  // In the sandbox the group's leader is bubblewrap, which ends on SIGTERM and takes its pid namespace with it.
  test.each([
    ['ends on SIGTERM', 'echo ready; sleep 1000', 'SIGTERM'],
    ['ignores SIGTERM', "trap '' TERM; echo ready; sleep 1000 & wait", sandboxed ? 'SIGTERM' : 'SIGKILL'],
  ])(
    'returns once a command that %s has exited: the next terminal_output shows the exit',
    async (_what, command, signal) => {
      const terminalId = await create(server, { command });
      // Killed only once it runs (and has set its trap).
      const deadline = Date.now() + 10_000;
      for (;;) {
        const { output } = structuredResult(await callTool(server, 'terminal_output', { terminalId }));
        if (output === 'ready\n') break;
        if (Date.now() > deadline) throw new Error(`never ready: ${JSON.stringify(output)}`);
        await pause(25);
      }
      expect(structuredResult(await callTool(server, 'terminal_kill', { terminalId }))).toEqual({});
      const out = structuredResult(await callTool(server, 'terminal_output', { terminalId }));
      expect(out.exitStatus).toEqual({ exitCode: null, signal, timedOut: false });
      await callTool(server, 'terminal_release', { terminalId });
    },
  );
});

describe('terminal_wait_for_exit on an unknown id while the gate starts', () => {
  test('answers "unknown terminal id", whatever the timeout, from the first request on', async () => {
    const server = WireServer.start(['--policy', unsandboxedDefaultPolicy()], { cwd: scratch });
    try {
      // Sent at once, before the policy gate can be ready; the shortest timeout runs out first.
      const answers = await Promise.all(
        [0.001, 0.05, 1].map((timeoutSeconds) =>
          callTool(server, 'terminal_wait_for_exit', { terminalId: 'no-such-terminal', timeoutSeconds }),
        ),
      );
      for (const answer of answers) expect(toolErrorText(answer)).toBe(UNKNOWN_ID);
    } finally {
      await server.dispose();
    }
  });
});

describe('policy refusals and the texts a model reads', () => {
  let server: WireServer;
  beforeAll(() => {
    server = WireServer.start(['--policy', pinsPolicy()], { cwd: scratch });
  });
  afterAll(() => server.dispose());

  test('a refused terminal_create in its command + args form spawns nothing', async () => {
    const refusedMarker = path.join(scratch, 'refused-marker');
    const refused = await callTool(server, 'terminal_create', { command: 'touch', args: [refusedMarker] });
    expect(toolErrorText(refused)).toMatch(/^Denied by policy: .*pins-no-touch/);
    // The same form of an allowed command does run: the marker check can see a spawn.
    const allowedMarker = path.join(scratch, 'allowed-marker');
    const allowed = await create(server, { command: 'mkdir', args: [allowedMarker], waitSeconds: 10 });
    expect(existsSync(allowedMarker)).toBe(true);
    await callTool(server, 'terminal_release', { terminalId: allowed });
    expect(existsSync(refusedMarker)).toBe(false);
  });

  test('failed tool results carry these exact texts', async () => {
    const missing = path.join(scratch, 'no-such-program');
    const expected: Array<[string, string, Record<string, unknown>, string]> = [
      [
        'a refusal, command line',
        'terminal_create',
        { command: 'touch x' },
        'Denied by policy: `touch x` matched deny rule pins-no-touch (touch is refused here). Rules: pins-no-touch. Nothing was run. Do not retry the same command; choose another approach or ask the user.',
      ],
      [
        'a refusal, command + args',
        'terminal_create',
        { command: 'touch', args: ['x'] },
        'Denied by policy: `touch x` matched deny rule pins-no-touch (touch is refused here). Rules: pins-no-touch. Nothing was run. Do not retry the same command; choose another approach or ask the user.',
      ],
      ['an unknown id (output)', 'terminal_output', { terminalId: 'no-such-terminal' }, UNKNOWN_ID],
      ['an unknown id (wait)', 'terminal_wait_for_exit', { terminalId: 'no-such-terminal' }, UNKNOWN_ID],
      ['an unknown id (kill)', 'terminal_kill', { terminalId: 'no-such-terminal' }, UNKNOWN_ID],
      ['an unknown id (release)', 'terminal_release', { terminalId: 'no-such-terminal' }, UNKNOWN_ID],
      [
        'a program that does not exist',
        'terminal_create',
        { command: missing, args: [] },
        `Program not found: Program not found: ${missing} (cwd ${scratch}). Check the name, or run it as a command line (omit "args") so that PATH lookups and shell syntax apply.`,
      ],
      [
        'a working directory that does not exist',
        'terminal_create',
        { command: 'true', cwd: path.join(scratch, 'no-such-dir') },
        `Denied by policy: the cwd ${path.join(scratch, 'no-such-dir')} does not exist or cannot be resolved. Nothing was run. Do not retry the same command; choose another approach or ask the user.`,
      ],
      [
        'a missing argument',
        'terminal_output',
        {},
        'Invalid arguments for terminal_output: "terminalId" is required.',
      ],
      [
        'an argument of the wrong type',
        'terminal_wait_for_exit',
        { terminalId: 'x', timeoutSeconds: 'soon' },
        'Invalid arguments for terminal_wait_for_exit: "timeoutSeconds" must be number.',
      ],
      [
        'a budget over the policy ceiling',
        'terminal_output',
        { terminalId: 'x', maxOutputChars: 100_000_000 },
        expect.stringMatching(
          /^Invalid arguments for terminal_output: "maxOutputChars" must be at most \d+ \(the policy's ceiling\)\.$/,
        ) as unknown as string,
      ],
    ];
    const answered: Array<{ label: string; text: string }> = [];
    for (const [label, tool, args] of expected) {
      answered.push({ label, text: toolErrorText(await callTool(server, tool, args)) });
    }
    expect(answered).toEqual(expected.map(([label, , , text]) => ({ label, text })));

    // The limit: two terminals that still run, then a third.
    const running = [
      await create(server, { command: 'sleep 1000' }),
      await create(server, { command: 'sleep 1000' }),
    ];
    const third = await callTool(server, 'terminal_create', { command: 'sleep 1000' });
    expect(toolErrorText(third)).toBe(
      'Too many commands are running: At most 2 terminals may exist at once; none of them has exited (2 running); exited terminals are reclaimed automatically, so stop one with kill or release it. Stop one you no longer need with terminal_kill (or terminal_release), then try again.',
    );
    for (const terminalId of running) await callTool(server, 'terminal_release', { terminalId });
  });
});
