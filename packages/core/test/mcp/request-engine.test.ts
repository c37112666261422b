/**
 * The request engine's id bookkeeping, cancellation and error paths, seen
 * from the client: an open subscription keeps its id, a cancelled request
 * frees its id at once (and its late end does not free the id's next
 * user), only `notifications/cancelled` cancels, and a request that fails
 * with something other than a protocol error is answered -32603.
 */
import { AjvSchemaValidator } from '../../src/adapters/ajv-schema-validator.js';
import { type McpConnection, McpServer, type McpServerOptions } from '../../src/mcp/mcp-server.js';
import { InMemoryChannel } from '../support/in-memory-channel.js';
import { ScriptedTerminalHost } from '../support/scripted-terminal-host.js';

const MODERN = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'test-client', version: '9.9.9' },
};

class SlowKillHost extends ScriptedTerminalHost {
  private gates: (() => void)[] = [];
  override async kill(id: string): Promise<void> {
    await new Promise<void>((resolve) => this.gates.push(resolve));
    return super.kill(id);
  }
  async killStarted(): Promise<void> {
    while (this.gates.length === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  finishKills(): void {
    for (const open of this.gates.splice(0)) open();
  }
}

function setup(options: Partial<McpServerOptions> = {}) {
  const host = new SlowKillHost();
  const server = new McpServer(host, new AjvSchemaValidator(), {
    serverInfo: { name: 'termgate', version: '0.1.0-test' },
    defaultCreateWaitSeconds: 0,
    ...options,
  });
  const channel = new InMemoryChannel();
  const connection: McpConnection = server.connect(channel);
  return { host, client: channel.client, connection };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));
const tool = (id: number, name: string, args: object) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args, _meta: MODERN },
});
const cancel = (requestId: number) => ({
  jsonrpc: '2.0',
  method: 'notifications/cancelled',
  params: { requestId },
});
const DUPLICATE = {
  code: -32600,
  message: expect.stringContaining('this id is already used by a request in flight'),
};

async function withTerminal(options: Partial<McpServerOptions> = {}) {
  const parts = setup(options);
  await parts.client.request(1, 'tools/call', tool(1, 'terminal_create', { command: 'sleep' }).params);
  return parts;
}

describe('McpServer request ids', () => {
  it('an open subscription keeps its id: a request with it is refused until the listen ends', async () => {
    const { client, connection } = setup();
    client.send({ jsonrpc: '2.0', id: 5, method: 'subscriptions/listen', params: { _meta: MODERN } });
    expect(await client.waitFor((m) => m.method === 'notifications/subscriptions/acknowledged')).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 5 }, notifications: {} },
    });
    await tick();
    client.send({ jsonrpc: '2.0', id: 5, method: 'ping' });
    expect((await client.waitFor((m) => m.id === 5 && 'error' in m)).error).toEqual(DUPLICATE);
    await connection.shutdown();
    client.send({ jsonrpc: '2.0', id: 5, method: 'ping' });
    expect(await client.waitFor((m) => m.id === 5 && JSON.stringify(m.result) === '{}')).toBeDefined();
  });

  it('a cancelled request frees its id at once, and its late end does not free the id of the next', async () => {
    const { host, client } = await withTerminal();
    client.send(tool(2, 'terminal_wait_for_exit', { terminalId: 't1' }));
    await tick();
    client.send(cancel(2));
    client.send(tool(2, 'terminal_wait_for_exit', { terminalId: 't1' }));
    await tick();
    await tick();
    expect(client.received.filter((m) => m.id === 2)).toEqual([]);
    client.send(tool(2, 'terminal_wait_for_exit', { terminalId: 't1' }));
    expect((await client.waitFor((m) => m.id === 2 && 'error' in m)).error).toEqual(DUPLICATE);
    expect(client.received.filter((m) => m.id === 2)).toHaveLength(1);
    host.exit('t1', { exitCode: 0, signal: null, timedOut: false });
    await client.waitFor((m) => m.id === 2 && 'result' in m);
  });

  it('only notifications/cancelled cancels: another notification naming a request leaves it running', async () => {
    const { host, client } = await withTerminal();
    client.send(tool(2, 'terminal_kill', { terminalId: 't1' }));
    await host.killStarted();
    client.send({ jsonrpc: '2.0', method: 'notifications/progress', params: { requestId: 2 } });
    host.finishKills();
    expect(await client.response(2)).toMatchObject({ result: { structuredContent: {} } });
  });

  it('cancelling the queued head lets a wait queued behind it start while the slot is still held', async () => {
    const { host, client } = await withTerminal({ maxActiveRequests: 1 });
    client.send(tool(2, 'terminal_kill', { terminalId: 't1' }));
    await host.killStarted();
    client.send({ jsonrpc: '2.0', id: 3, method: 'ping' });
    client.send(tool(4, 'terminal_wait_for_exit', { terminalId: 't1', timeoutSeconds: 0 }));
    await tick();
    expect(client.received.some((m) => m.id === 4)).toBe(false);
    client.send(cancel(3));
    await client.response(4);
    expect(client.received.some((m) => m.id === 2 || m.id === 3)).toBe(false);
    host.finishKills();
    await client.response(2);
  });

  it('a request that is not tools/call is answer-producing whatever its params name', async () => {
    const { host, client } = await withTerminal({ maxActiveRequests: 1 });
    client.send(tool(2, 'terminal_kill', { terminalId: 't1' }));
    await host.killStarted();
    client.send({ jsonrpc: '2.0', id: 3, method: 'ping', params: { name: 'terminal_wait_for_exit' } });
    await tick();
    await tick();
    expect(client.received.some((m) => m.id === 3)).toBe(false);
    host.finishKills();
    await client.response(3);
  });
});

describe('McpServer errors', () => {
  it('a legacy subscriptions/listen is an unknown method', async () => {
    const { client } = setup();
    expect((await client.request(1, 'subscriptions/listen')).error).toMatchObject({ code: -32601 });
  });

  it('a failure that is not a protocol error is answered -32603 with its message', async () => {
    const { host, client } = await withTerminal();
    // Not a TermhostError: a failure the tools do not turn into a tool result.
    host.refuseOutputWith = new Error('disk gone') as never;
    const answer = await client.request(
      2,
      'tools/call',
      tool(2, 'terminal_output', { terminalId: 't1' }).params,
    );
    expect(answer).toMatchObject({ error: { code: -32603, message: expect.stringContaining('disk gone') } });
    expect(JSON.stringify(answer)).not.toContain('Error: disk gone');
  });

  it('an over-long line is answered with its size and the limit', async () => {
    const { client } = setup();
    client.framingError({ kind: 'line-too-long', bytes: 5_000_000, maxLineBytes: 4_194_304 });
    expect(await client.waitFor(() => true)).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32600,
        message: expect.stringContaining(
          'message of 5000000 bytes exceeds the 4194304-byte line limit and was discarded',
        ),
      },
    });
  });

  it('a listen after shutdown carries its subscription id and the server info', async () => {
    const { client, connection } = setup();
    await connection.shutdown();
    const response = await client.request(7, 'subscriptions/listen', { _meta: MODERN });
    expect(response.result).toEqual({
      resultType: 'complete',
      _meta: {
        'io.modelcontextprotocol/subscriptionId': 7,
        'io.modelcontextprotocol/serverInfo': { name: 'termgate', version: '0.1.0-test' },
      },
    });
  });
});
