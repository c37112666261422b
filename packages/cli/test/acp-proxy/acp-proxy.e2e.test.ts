/**
 * `termgate acp-proxy` end to end, with real processes on both sides: an
 * editor and an agent built with @agentclientprotocol/sdk 2.4.0 (processes
 * of their own, so `.mjs` fixtures that Node runs as they are), and the
 * built `termgate acp-proxy` in between, under the shipped default policy
 * unless a test names another.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { isAlive } from '../../../../test-support/processes.js';
import { defaultPolicyArgs } from '../e2e/support/wire-server.js';

const run = promisify(execFile);
const FIXTURES = path.join(import.meta.dirname, 'fixtures');
const BIN = path.resolve(import.meta.dirname, '../../dist/bin.js');
const AGENT = path.join(FIXTURES, 'agent.mjs');
const EDITOR = path.join(FIXTURES, 'editor.mjs');
const POLICY = path.join(FIXTURES, 'deny-rm.policy.yaml');

// biome-ignore lint/suspicious/noExplicitAny: JSON read back from the editor fixture; the assertions check its shape.
type Json = Record<string, any>;

/**
 * Runs the editor fixture through the proxy. Without `proxyOptions`: the
 * shipped default policy, with the sandbox off unless `sandboxed` (the
 * shutdown tests read pids from outside, which a pid namespace renumbers).
 */
async function editor(scenario: string, proxyOptions?: string[], sandboxed = false): Promise<Json> {
  const options = proxyOptions ?? [
    '--audit',
    path.join(audit, `${scenario}-${sandboxed ? 'sandboxed' : 'unsandboxed'}.jsonl`),
    ...defaultPolicyArgs(sandboxed),
  ];
  const { stdout } = await run(
    process.execPath,
    [EDITOR, scenario, '--', process.execPath, BIN, 'acp-proxy', ...options, '--', process.execPath, AGENT],
    { timeout: 30_000 },
  );
  const result = JSON.parse(stdout) as Json;
  if (result.error) throw new Error(`editor failed: ${JSON.stringify(result.error)}\n${result.proxyStderr}`);
  return result;
}

/** Resolves once `pid` is gone; fails the test, naming the pid, if it outlives 10 s. */
async function gone(pid: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (isAlive(pid)) {
    if (Date.now() > deadline) throw new Error(`process ${pid} is still alive`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

let audit: string;

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error(`build the CLI first (npx tsc -b packages/cli): ${BIN} is missing`);
  audit = mkdtempSync(path.join(tmpdir(), 'termgate-acp-proxy-'));
});

afterAll(() => {
  rmSync(audit, { recursive: true, force: true });
});

describe.each([
  ['sandbox off', false],
  ['sandbox on: the shipped default policy', true],
] as const)('termgate acp-proxy between an SDK editor and an SDK agent, %s', (_mode, sandboxed) => {
  let result: Json;

  beforeAll(async () => {
    result = await editor('run', undefined, sandboxed);
  });

  test('initialize reaches the agent with terminal: true, the rest of it untouched', () => {
    expect(result.report.clientCapabilities).toEqual({
      fs: { readTextFile: false, writeTextFile: false },
      terminal: true,
      auth: { terminal: false },
    });
    expect(result.initialize.agentInfo).toEqual({ name: 'termgate-fixture-agent', version: '0.0.1' });
  });

  test('the agent creates, streams, waits for, kills and releases a terminal through the proxy', () => {
    const { streamed, exit, final, killed, released, afterRelease } = result.report;
    expect(streamed.output).toContain('line1');
    expect(exit).toEqual({ exitCode: 0, signal: null });
    expect(final).toEqual({
      output: 'line1\nline2\n',
      truncated: false,
      exitStatus: { exitCode: 0, signal: null },
    });
    expect(killed).toEqual({});
    expect(released).toEqual({});
    expect(afterRelease.code).toBe(-32002);
    expect(afterRelease.data).toEqual({ terminalId: expect.any(String) });
    expect(result.prompt).toEqual({ stopReason: 'end_turn' });
  });

  test('the editor never receives a terminal/* request', () => {
    expect(result.terminalRequests).toEqual([]);
  });

  test('other session updates pass through with identical content', () => {
    const plain = result.updates.find(
      (u: Json) =>
        u.update.sessionUpdate === 'agent_message_chunk' && u.update.content.text.startsWith('plain'),
    );
    expect(plain).toEqual({
      sessionId: result.sessionId,
      update: {
        sessionUpdate: 'agent_message_chunk',
        content: { type: 'text', text: 'plain é ✓ text\n', annotations: { priority: 0.5 } },
        _meta: { 'fixture/nested': { list: [1, 'two', null] } },
      },
    });
    const status = result.updates.find((u: Json) => u.update.status === 'completed');
    expect(status.update).toEqual({
      sessionUpdate: 'tool_call_update',
      toolCallId: 'call-run',
      status: 'completed',
    });
  });

  test('embedded terminal content reaches the editor as text, kept current until the exit line', () => {
    const calls = result.updates.filter((u: Json) => u.update.toolCallId === 'call-run' && u.update.content);
    const first = calls[0].update;
    expect(first).toMatchObject({
      sessionUpdate: 'tool_call',
      title: 'run a command',
      status: 'in_progress',
    });
    const texts: string[] = calls.map((u: Json) => {
      expect(u.update.content).toHaveLength(1);
      expect(u.update.content[0].type).toBe('content');
      expect(u.update.content[0].content.type).toBe('text');
      return u.update.content[0].content.text;
    });
    expect(texts.at(-1)).toBe('line1\nline2\n[exited with code 0]');
    // Every text is a prefix of the next: the output only grows.
    for (let i = 1; i < texts.length; i++) {
      expect(texts[i]!.startsWith(texts[i - 1]!.replace(/\[exited with code 0\]$/, ''))).toBe(true);
    }
    for (const u of calls.slice(1)) {
      expect(Object.keys(u.update).sort()).toEqual(['content', 'sessionUpdate', 'toolCallId']);
    }
    expect(result.updates.some((u: Json) => JSON.stringify(u).includes('"terminal"'))).toBe(false);
  });

  test('the proxy exits 0 when the editor closes its side', () => {
    expect(result.proxyExit).toEqual({ code: 0, signal: null });
  });
});

describe('termgate acp-proxy with a policy', () => {
  test('a refusal reaches the agent as an error it can read', async () => {
    const result = await editor('deny', ['--policy', POLICY, '--audit', path.join(audit, 'deny.jsonl')]);
    expect(result.report.created).toBe(false);
    expect(result.report.error.code).toBe(-32010);
    expect(result.report.error.message).toMatch(/^Denied by policy: .*rm is not allowed in this test/);
    // The policy engine's reason starts "denied: "; the refusal says it once.
    expect(result.report.error.message).not.toMatch(/denied: /i);
    expect(result.report.error.data).toMatchObject({ verb: 'create', ruleIds: ['no-rm-in-tests'] });
  });

  test('a policy that cannot be loaded stops the proxy before the agent starts', async () => {
    const marker = path.join(audit, 'agent-started');
    const child = spawn(
      process.execPath,
      [
        BIN,
        'acp-proxy',
        '--policy',
        path.join(audit, 'missing.yaml'),
        '--',
        process.execPath,
        '-e',
        `require('fs').writeFileSync(${JSON.stringify(marker)}, '')`,
      ],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toMatch(/refusing to start/);
    expect(existsSync(marker)).toBe(false);
  });

  test('without --policy the default policy gates and the trail records every verb', async () => {
    const trail = path.join(audit, 'default-policy.jsonl');
    await editor('run', ['--audit', trail]);
    const verified = await run(process.execPath, [BIN, 'audit', 'verify', trail]);
    expect(verified.stdout).toMatch(/intact/);
    const shown = await run(process.execPath, [BIN, 'audit', 'show', trail, '--json']);
    const records = shown.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Json);
    expect(records[0]!.termgate.policy.path).toMatch(/policies\/default\.yaml$/);
    expect(records.map((r) => r.event.action)).toEqual(
      expect.arrayContaining(['terminal-create', 'terminal-spawn', 'terminal-exit', 'terminal-release']),
    );
    expect(records.filter((r) => r.termgate?.protocol).every((r) => r.termgate.protocol === 'acp/1')).toBe(
      true,
    );
  });
});

describe('termgate acp-proxy cancellation and shutdown', () => {
  test('$/cancel_request of a pending wait answers -32800; the terminal keeps running', async () => {
    const result = await editor('cancel');
    expect(result.report.outcome.error.code).toBe(-32800);
    expect(result.report.afterCancel).not.toHaveProperty('exitStatus');
  });

  test('closing the editor side leaves no process behind', async () => {
    const result = await editor('sleep');
    const { agentPid, sleepPid } = result.report as { agentPid: number; sleepPid: number };
    expect(result.proxyExit).toEqual({ code: 0, signal: null });
    await gone(agentPid);
    await gone(sleepPid);
    expect(isAlive(agentPid)).toBe(false);
    expect(isAlive(sleepPid)).toBe(false);
  });

  test('an agent that never reads its stdin does not hold the proxy up: it is stopped, with its process group', async () => {
    const proxy = spawn(
      process.execPath,
      [
        BIN,
        'acp-proxy',
        '--audit',
        path.join(audit, 'stuck.jsonl'),
        '--log-level',
        'silent',
        '--',
        'sh',
        '-c',
        'sleep 1000 & echo "pids $$ $!" >&2; wait',
      ],
      { stdio: ['pipe', 'ignore', 'pipe'] },
    );
    let stderr = '';
    proxy.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    while (!/pids \d+ \d+/.test(stderr)) await new Promise((resolve) => setTimeout(resolve, 20));
    const [, agentPid, sleepPid] = /pids (\d+) (\d+)/.exec(stderr)!.map(Number);
    // More than the pipe holds: the proxy's writes to the agent back up.
    const line = `${JSON.stringify({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId: 's', pad: 'x'.repeat(1000) } })}\n`;
    proxy.stdin.end(line.repeat(400));
    const code = await new Promise((resolve) => proxy.once('exit', resolve));
    expect(code).toBe(0);
    await gone(agentPid!);
    await gone(sleepPid!);
  });

  test('when the agent exits, the proxy exits with its code', async () => {
    await expect(
      run(process.execPath, [
        BIN,
        'acp-proxy',
        '--audit',
        path.join(audit, 'exit.jsonl'),
        '--',
        process.execPath,
        '-e',
        'process.exit(3)',
      ]),
    ).rejects.toMatchObject({ code: 3 });
  });
});
