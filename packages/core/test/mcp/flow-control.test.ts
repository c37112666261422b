/**
 * The request engine's flow control, settle and shutdown, seen from the
 * client: a request is started only while the client's unread output is
 * below `maxBacklogBytes`, fewer than `maxInFlight` requests are in flight
 * and (for answer-producing ones) fewer than `maxActiveRequests` run; the
 * channel is paused while a request waits and resumed when none does.
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

/** An in-memory channel with the optional flow-control members of the port. */
class FlowChannel extends InMemoryChannel {
  backlog = 0;
  reading = true;
  ondrain?: () => void;
  pause(): void {
    this.reading = false;
  }
  resume(): void {
    this.reading = true;
  }
  backlogBytes(): number {
    return this.backlog;
  }
}

/** A host whose kill waits for `release()`: an answer-producing request that holds its slot. */
class SlowKillHost extends ScriptedTerminalHost {
  private gates: (() => void)[] = [];
  override async kill(id: string): Promise<void> {
    await new Promise<void>((resolve) => this.gates.push(resolve));
    return super.kill(id);
  }
  /** Lets every kill that waits go on, once at least one does. */
  async finishKills(): Promise<void> {
    while (this.gates.length === 0) await new Promise((resolve) => setImmediate(resolve));
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
  const channel = new FlowChannel();
  const connection: McpConnection = server.connect(channel);
  return { host, channel, client: channel.client, connection };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));
const tool = (id: number, name: string, args: object) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args, _meta: MODERN },
});
const ping = (id: number) => ({ jsonrpc: '2.0', id, method: 'ping' });
const answered = (client: InMemoryChannel['client'], id: number) => client.received.some((m) => m.id === id);

describe('McpServer flow control', () => {
  it('starts nothing while the unread output is at maxBacklogBytes; pauses, and starts it on drain', async () => {
    const { channel, client } = setup({ maxBacklogBytes: 100 });
    channel.backlog = 100;
    client.send(ping(1));
    await tick();
    expect(answered(client, 1)).toBe(false);
    expect(channel.reading).toBe(false);
    channel.backlog = 99;
    channel.ondrain?.();
    expect(await client.response(1)).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    expect(channel.reading).toBe(true);
  });

  it('starts a queued request when a wait that filled maxInFlight answers, with no other message arriving', async () => {
    const { host, channel, client } = setup({ maxInFlight: 1 });
    await client.request(1, 'tools/call', tool(1, 'terminal_create', { command: 'sleep' }).params);
    client.send(tool(2, 'terminal_wait_for_exit', { terminalId: 't1' }));
    client.send(ping(3));
    await tick();
    expect(answered(client, 3)).toBe(false);
    // The command ends on its own: the wait answers, and nothing else is sent.
    host.exit('t1', { exitCode: 0, signal: null, timedOut: false });
    await client.response(2);
    expect(await client.response(3)).toMatchObject({ result: {} });
    expect(channel.reading).toBe(true);
  });

  it('holds a request while maxInFlight requests are in flight, and starts it when one answers', async () => {
    const { host, channel, client } = setup({ maxInFlight: 2 });
    await client.request(1, 'tools/call', tool(1, 'terminal_create', { command: 'sleep' }).params);
    client.send(tool(2, 'terminal_wait_for_exit', { terminalId: 't1' }));
    client.send(tool(3, 'terminal_kill', { terminalId: 't1' }));
    client.send(ping(4));
    await tick();
    expect(answered(client, 4)).toBe(false);
    expect(channel.reading).toBe(false);
    await host.finishKills();
    await client.response(3);
    await client.response(2);
    expect(await client.response(4)).toMatchObject({ result: {} });
    expect(channel.reading).toBe(true);
  });

  it('runs waits while maxActiveRequests answer-producing requests run; holds the next of those', async () => {
    const { host, channel, client } = setup({ maxActiveRequests: 1 });
    await client.request(1, 'tools/call', tool(1, 'terminal_create', { command: 'sleep' }).params);
    client.send(tool(2, 'terminal_kill', { terminalId: 't1' }));
    client.send(tool(3, 'terminal_wait_for_exit', { terminalId: 't1', timeoutSeconds: 0 }));
    client.send({
      jsonrpc: '2.0',
      id: 4,
      method: 'subscriptions/listen',
      params: { _meta: MODERN, notifications: {} },
    });
    client.send(ping(5));
    await client.response(3);
    await client.waitFor((m) => m.method === 'notifications/subscriptions/acknowledged');
    expect(answered(client, 5)).toBe(false);
    expect(channel.reading).toBe(false);
    await host.finishKills();
    await client.response(2);
    expect(await client.response(5)).toMatchObject({ result: {} });
    expect(channel.reading).toBe(true);
  });

  it('a request queued at the limit can be cancelled; the one after it then starts', async () => {
    const { host, client } = setup({ maxActiveRequests: 1 });
    await client.request(1, 'tools/call', tool(1, 'terminal_create', { command: 'sleep' }).params);
    client.send(tool(2, 'terminal_kill', { terminalId: 't1' }));
    client.send(ping(3));
    client.send(ping(4));
    client.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3 } });
    await host.finishKills();
    await client.response(4);
    await tick();
    expect(answered(client, 3)).toBe(false);
  });

  it('an id is free again once its request answered, and a cancel of an unknown id changes nothing', async () => {
    const { client } = setup();
    client.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 9 } });
    expect(await client.request(1, 'ping')).toMatchObject({ result: {} });
    expect(await client.request(1, 'ping')).toMatchObject({ result: {} });
    expect(client.received.filter((m) => 'error' in m)).toEqual([]);
  });
});

describe('McpConnection.settle and shutdown', () => {
  it('settle resolves once every started request answered', async () => {
    const { host, client, connection } = setup();
    await connection.settle(1);
    await client.request(1, 'tools/call', tool(1, 'terminal_create', { command: 'sleep' }).params);
    client.send(tool(2, 'terminal_kill', { terminalId: 't1' }));
    await tick();
    let settled = false;
    const settling = connection.settle(60_000).then(() => {
      settled = true;
    });
    await tick();
    expect(settled).toBe(false);
    await host.finishKills();
    await settling;
    expect(answered(client, 2)).toBe(true);
  });

  it('settle gives up after its timeout on a request that does not answer', async () => {
    const { client, connection } = setup();
    await client.request(1, 'tools/call', tool(1, 'terminal_create', { command: 'sleep' }).params);
    client.send(tool(2, 'terminal_kill', { terminalId: 't1' }));
    await tick();
    await connection.settle(10);
    expect(answered(client, 2)).toBe(false);
  });

  it('a listen after shutdown is answered complete at once, not acknowledged', async () => {
    const { client, connection } = setup();
    await connection.shutdown();
    await connection.shutdown();
    const response = await client.request(7, 'subscriptions/listen', { _meta: MODERN, notifications: {} });
    expect(response.result).toMatchObject({ resultType: 'complete' });
    expect(client.received.filter((m) => m.method !== undefined)).toEqual([]);
  });
});
