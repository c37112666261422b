/**
 * The model-facing behaviour of the terminal tools over an in-memory host the
 * test drives by hand: the one-call path, reads since the cursor, budgets and
 * a cancelled create. The e2e suites run the same behaviours with real clients
 * and processes.
 */
import { TermhostError } from '@termgate/termhost';
import { AjvSchemaValidator } from '../../../src/adapters/ajv-schema-validator.js';
import { McpServer } from '../../../src/mcp/mcp-server.js';
import { InMemoryChannel, type TestClient } from '../../support/in-memory-channel.js';
import { ScriptedTerminalHost } from '../../support/scripted-terminal-host.js';

const MODERN = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};
const tick = (ms = 0): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function setup(options: Partial<ConstructorParameters<typeof McpServer>[2]> = {}): {
  host: ScriptedTerminalHost;
  client: TestClient;
} {
  const host = new ScriptedTerminalHost();
  const server = new McpServer(host, new AjvSchemaValidator(), {
    serverInfo: { name: 'termgate', version: '0' },
    progressIntervalMs: 5,
    ...options,
  });
  const channel = new InMemoryChannel();
  server.connect(channel);
  return { host, client: channel.client };
}

interface Result {
  structuredContent: Record<string, unknown>;
  content: { type: string; text: string }[];
  isError?: boolean;
}

async function call(client: TestClient, id: number, name: string, args: object, meta: object = MODERN) {
  return (await client.request(id, 'tools/call', { name, arguments: args, _meta: meta })).result as Result;
}

function textOf(result: Result): string {
  return result.content.map((block) => block.text).join('');
}

describe('terminal_create with a wait', () => {
  it('returns the exit status and the output in one call when the command finishes within the wait', async () => {
    const { client, host } = setup();
    const pending = call(client, 1, 'terminal_create', { command: 'build', waitSeconds: 5 });
    await tick();
    host.write('t1', 'compiled\n');
    host.exit('t1', { exitCode: 0, signal: null, timedOut: false });
    const result = await pending;
    expect(result.structuredContent).toEqual({
      terminalId: 't1',
      running: false,
      exitCode: 0,
      signal: null,
      timedOut: false,
      output: 'compiled\n',
      totalBytes: 9,
    });
    expect(result.content).toHaveLength(1);
    expect(host.calls.map((c) => c.verb)).toEqual(['create']);
  });

  it('returns the handle, running: true and the output so far when the wait passes first', async () => {
    const { client, host } = setup();
    const pending = call(client, 1, 'terminal_create', { command: 'server', waitSeconds: 0.05 });
    await tick();
    host.write('t1', 'listening\n');
    const result = await pending;
    expect(result.structuredContent).toMatchObject({
      terminalId: 't1',
      running: true,
      exitCode: null,
      output: 'listening\n',
    });
    expect(textOf(result)).toMatch(/Still running after 0.05 s.*terminal_wait_for_exit/);
    expect((await host.output('t1')).exitStatus).toBeNull();
  });

  it('waits the default (here 0.05 s) when the call names none, and 0 returns at once', async () => {
    const { client, host } = setup({ defaultCreateWaitSeconds: 0.05 });
    const started = Date.now();
    expect((await call(client, 1, 'terminal_create', { command: 'a' })).structuredContent.running).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    host.exit('t1', { exitCode: 0, signal: null, timedOut: false });
    const now = await call(client, 2, 'terminal_create', { command: 'b', waitSeconds: 0 });
    expect(now.structuredContent).toMatchObject({ terminalId: 't2', running: true });
  });
});

describe('terminal_create after the spawn', () => {
  it('names the handle when reading the started command is refused, so the model can still stop it', async () => {
    const { client, host } = setup({ defaultCreateWaitSeconds: 0 });
    host.refuseOutputWith = new TermhostError('GATE_DENIED', 'output denied: no reads here', {
      verb: 'output',
      reason: 'no reads here',
      ruleIds: ['no-reads'],
    });
    const result = await call(client, 1, 'terminal_create', { command: 'server' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(
      /^The command started as terminalId "t1", but reading it failed: Denied by policy: no reads here/,
    );
    // Still running, not killed: the handle in the message is live.
    expect(host.terminals.get('t1')?.exit).toBeNull();
  });
});

describe('terminal_wait_for_exit returns the output since the last read', () => {
  it('returns only what was written after the previous result, then the rest with the exit status', async () => {
    const { client, host } = setup();
    const created = call(client, 1, 'terminal_create', { command: 'tail', waitSeconds: 0.05 });
    await tick();
    host.write('t1', 'one\n');
    expect((await created).structuredContent.output).toBe('one\n');
    host.write('t1', 'two\n');
    const first = await call(client, 2, 'terminal_wait_for_exit', { terminalId: 't1', timeoutSeconds: 0.05 });
    expect(first.structuredContent).toMatchObject({ running: true, output: 'two\n', totalBytes: 8 });
    const again = await call(client, 3, 'terminal_wait_for_exit', { terminalId: 't1', timeoutSeconds: 0.05 });
    expect(again.structuredContent).toMatchObject({ running: true, output: '', totalBytes: 8 });
    host.write('t1', 'three\n');
    host.exit('t1', { exitCode: null, signal: 'SIGTERM', timedOut: false });
    const done = await call(client, 4, 'terminal_wait_for_exit', { terminalId: 't1' });
    expect(done.structuredContent).toMatchObject({ running: false, signal: 'SIGTERM', output: 'three\n' });
    // terminal_output still has the whole retained tail.
    const whole = await call(client, 5, 'terminal_output', { terminalId: 't1' });
    expect(whole.structuredContent.output).toBe('one\ntwo\nthree\n');
  });
});

describe('output budget', () => {
  it('keeps every result text within maxOutputChars, with a marker that terminal_output fromByte follows', async () => {
    const { client, host } = setup({ defaultCreateWaitSeconds: 0 });
    await call(client, 1, 'terminal_create', { command: 'log' });
    const log = Array.from({ length: 4000 }, (_, i) => `entry ${i}: "quoted" \\ tab\t\n`).join('');
    host.write('t1', log);
    host.exit('t1', { exitCode: 1, signal: null, timedOut: false });
    const waited = await call(client, 2, 'terminal_wait_for_exit', {
      terminalId: 't1',
      maxOutputChars: 3000,
    });
    expect(textOf(waited).length).toBeLessThanOrEqual(3000);
    const output = waited.structuredContent.output as string;
    expect(output.startsWith('entry 0: ')).toBe(true);
    expect(output.endsWith('entry 3999: "quoted" \\ tab\t\n')).toBe(true);
    const [, fromByte] = /"fromByte": (\d+)/.exec(output)!;
    const page = await call(client, 3, 'terminal_output', {
      terminalId: 't1',
      fromByte: Number(fromByte),
      maxOutputChars: 3000,
    });
    expect(textOf(page).length).toBeLessThanOrEqual(3000);
    const head = output.slice(0, output.indexOf('\n[termgate:'));
    const pageText = page.structuredContent.output as string;
    expect(log.startsWith(head + pageText.slice(0, pageText.indexOf('\n[termgate:')))).toBe(true);
  });

  it('uses the configured default, refuses a call budget over the ceiling, and bounds progress updates', async () => {
    const { client, host } = setup({
      defaultCreateWaitSeconds: 0,
      outputBudget: Promise.resolve({ defaultChars: 2000, maxChars: 4000 }),
    });
    await call(client, 1, 'terminal_create', { command: 'spam' });
    const over = await call(client, 2, 'terminal_output', { terminalId: 't1', maxOutputChars: 4001 });
    expect(over.isError).toBe(true);
    expect(textOf(over)).toMatch(/"maxOutputChars" must be at most 4000/);
    const tooSmall = await call(client, 3, 'terminal_output', { terminalId: 't1', maxOutputChars: 10 });
    expect(tooSmall.isError).toBe(true);
    client.send({
      jsonrpc: '2.0',
      id: 4,
      method: 'tools/call',
      params: {
        name: 'terminal_wait_for_exit',
        arguments: { terminalId: 't1' },
        _meta: { ...MODERN, progressToken: 'p' },
      },
    });
    await tick();
    for (let i = 0; i < 20; i++) host.write('t1', 'x'.repeat(1000));
    await tick(30);
    host.exit('t1', { exitCode: 0, signal: null, timedOut: false });
    const result = (await client.response(4)).result as Result;
    expect(textOf(result).length).toBeLessThanOrEqual(2000);
    const updates = client.received.filter((m) => m.method === 'notifications/progress');
    expect(updates.length).toBeGreaterThan(0);
    for (const update of updates) {
      expect(((update.params as { message: string }).message ?? '').length).toBeLessThanOrEqual(2000);
    }
  });
});

describe('a cancelled terminal_create', () => {
  it('leaves the command running, sends nothing for it, and names its handle in the next result', async () => {
    const { client, host } = setup();
    client.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'terminal_create', arguments: { command: 'npm test', waitSeconds: 30 }, _meta: MODERN },
    });
    await tick(10);
    client.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } });
    await tick(10);
    expect(client.received.filter((m) => m.id === 1)).toEqual([]);
    expect((await host.output('t1')).exitStatus).toBeNull();
    const next = await call(client, 2, 'terminal_create', { command: 'true', waitSeconds: 0 });
    expect(textOf(next)).toMatch(
      /A terminal_create was cancelled after its command started: terminalId "t1" \("npm test"\)/,
    );
    const after = await call(client, 3, 'terminal_output', { terminalId: 't2' });
    expect(textOf(after)).not.toMatch(/cancelled/);
  });
});
