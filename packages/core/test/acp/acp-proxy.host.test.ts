import { ProcessTerminalHost } from '@termgate/termhost';
import { CrossSpawnProcessSpawner } from '@termgate/termhost/adapters';
import { AllowAllGate, NoopTerminalObserver } from '../../../../test-support/terminal-doubles.js';
import { AcpProxy, type AcpProxyConnection } from '../../src/acp/acp-proxy.js';
import { AjvSchemaValidator } from '../../src/adapters/ajv-schema-validator.js';
import type { MessageChannel } from '../../src/ports/message-channel.js';
import { AcpSchema } from './support/acp-schema.js';
import { TestPeer } from './support/test-peer.js';

type Json = Record<string, unknown>;

const schema = new AcpSchema();
let host: ProcessTerminalHost;
let editor: TestPeer;
let agent: TestPeer;
let proxy: AcpProxyConnection;

beforeEach(() => {
  host = new ProcessTerminalHost({
    gate: new AllowAllGate(),
    observer: new NoopTerminalObserver(),
    spawner: new CrossSpawnProcessSpawner(),
    killGraceMs: 500,
  });
  editor = new TestPeer();
  agent = new TestPeer();
  proxy = new AcpProxy(host, new AjvSchemaValidator(), { intervalMs: 20 }).connect(
    editor.channel,
    agent.channel,
  );
});

afterEach(async () => {
  await proxy.shutdown();
  await host.closeAll();
});

function textsOf(message: Json): string[] {
  const update = (message.params as Json).update as Json;
  return (update.content as Json[]).map((item) => {
    expect(item.type).toBe('content');
    return ((item.content as Json).text as string) ?? '';
  });
}

describe('AcpProxy over in-memory channels', () => {
  test('initialize reaches the agent with terminal: true; everything else is forwarded as sent', async () => {
    const initialize = {
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: false }, terminal: false },
      clientInfo: { name: 'ed', version: '1' },
    };
    editor.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: initialize });
    const received = await agent.waitFor((m) => m.method === 'initialize');
    expect(received.params).toEqual({
      ...initialize,
      clientCapabilities: { ...initialize.clientCapabilities, terminal: true },
    });

    const chunk = {
      sessionId: 's1',
      update: {
        sessionUpdate: 'agent_message_chunk',
        content: { type: 'text', text: 'hé\n' },
        _meta: { x: [1] },
      },
    };
    agent.send({ jsonrpc: '2.0', method: 'session/update', params: chunk });
    agent.send({ jsonrpc: '2.0', id: 7, method: 'session/request_permission', params: { a: 1 } });
    expect((await editor.waitFor((m) => m.method === 'session/update')).params).toEqual(chunk);
    expect(await editor.waitFor((m) => m.id === 7)).toEqual({
      jsonrpc: '2.0',
      id: 7,
      method: 'session/request_permission',
      params: { a: 1 },
    });
    editor.send({ jsonrpc: '2.0', id: 7, result: { outcome: { outcome: 'cancelled' } } });
    expect(await agent.waitFor((m) => m.id === 7)).toEqual({
      jsonrpc: '2.0',
      id: 7,
      result: { outcome: { outcome: 'cancelled' } },
    });
  });

  test('a malformed terminal/* message from the agent is answered or dropped, never forwarded to the editor', async () => {
    const create = { sessionId: 's1', command: 'touch /tmp/termgate-should-not-exist' };
    agent.send({ jsonrpc: '2.0', id: null, method: 'terminal/create', params: create });
    agent.send({ jsonrpc: '2.0', id: 1.5, method: 'terminal/create', params: create });
    agent.send({ id: 2, method: 'terminal/create', params: create });
    agent.send({ jsonrpc: '2.0', id: 3, method: 'terminal/create', params: ['x'] });
    agent.send({ jsonrpc: '2.0', method: 'terminal/create', params: create });
    agent.send([{ jsonrpc: '2.0', id: 4, method: 'terminal/create', params: create }]);
    agent.send({
      jsonrpc: '2.0',
      id: 5,
      method: 'terminal/write',
      params: { sessionId: 's1', terminalId: 't' },
    });
    const answers = await Promise.all([
      agent.waitFor((m) => m.id === 1.5 || (m.id === null && m.error !== undefined)),
      agent.waitFor((m) => m.id === 2),
      agent.waitFor((m) => m.id === 3),
      agent.waitFor((m) => m.id === 5),
    ]);
    expect(answers.map((m) => (m.error as Json).code)).toEqual([-32600, -32600, -32600, -32601]);
    // A marker round trip: everything sent before it has been handled.
    agent.send({ jsonrpc: '2.0', id: 9, method: 'session/request_permission', params: {} });
    await editor.waitFor((m) => m.id === 9);
    expect(editor.received.filter((m) => String(m.method ?? '').startsWith('terminal/'))).toEqual([]);
    expect(editor.received.filter((m) => Array.isArray(m))).toEqual([]);
  });

  test('a permission request that embeds a terminal reaches the editor with its text instead', async () => {
    const created = await agent.request('terminal/create', { sessionId: 's1', command: 'printf ready' });
    const terminalId = (created.result as Json).terminalId as string;
    await agent.request('terminal/wait_for_exit', { sessionId: 's1', terminalId });
    const toolCall = {
      toolCallId: 'c1',
      title: 'run',
      content: [
        { type: 'content', content: { type: 'text', text: 'about to run' } },
        { type: 'terminal', terminalId },
      ],
    };
    // Embedding it in a tool call first starts the proxy's mirror of its output.
    agent.send({
      jsonrpc: '2.0',
      method: 'session/update',
      params: { sessionId: 's1', update: { sessionUpdate: 'tool_call', ...toolCall } },
    });
    await editor.waitFor((m) => m.method === 'session/update' && JSON.stringify(m).includes('ready'));
    agent.send({
      jsonrpc: '2.0',
      id: 'perm-1',
      method: 'session/request_permission',
      params: { sessionId: 's1', toolCall, options: [{ optionId: 'ok', name: 'Allow', kind: 'allow_once' }] },
    });
    const forwarded = await editor.waitFor((m) => m.id === 'perm-1');
    const content = ((forwarded.params as Json).toolCall as Json).content as Json[];
    expect(content[0]).toEqual(toolCall.content[0]);
    expect(content[1]).toEqual({
      type: 'content',
      content: { type: 'text', text: expect.stringContaining('ready') },
    });
    expect(JSON.stringify(forwarded)).not.toContain('"terminal"');
  });

  test('terminal/* is answered by the proxy, never forwarded; embedded terminals become live text', async () => {
    const created = await agent.request('terminal/create', {
      sessionId: 's1',
      command: 'printf one; sleep 0.3; printf " two"',
    });
    const terminalId = (created.result as Json).terminalId as string;
    const toolCall = {
      sessionId: 's1',
      update: {
        sessionUpdate: 'tool_call',
        toolCallId: 'call_1',
        title: 'run',
        kind: 'execute',
        status: 'in_progress',
        content: [
          { type: 'content', content: { type: 'text', text: 'before' } },
          { type: 'terminal', terminalId },
        ],
      },
    };
    agent.send({ jsonrpc: '2.0', method: 'session/update', params: toolCall });

    const first = await editor.waitFor((m) => m.method === 'session/update');
    const firstUpdate = (first.params as Json).update as Json;
    expect(firstUpdate).toMatchObject({
      sessionUpdate: 'tool_call',
      toolCallId: 'call_1',
      status: 'in_progress',
    });
    expect(schema.errors('SessionNotification', first.params)).toEqual([]);
    expect(textsOf(first)[0]).toBe('before');

    const last = await editor.waitFor(
      (m) => m.method === 'session/update' && textsOf(m)[1]?.endsWith('[exited with code 0]') === true,
    );
    expect(textsOf(last)).toEqual(['before', 'one two\n[exited with code 0]']);
    expect((last.params as Json).update).toEqual({
      sessionUpdate: 'tool_call_update',
      toolCallId: 'call_1',
      content: [
        { type: 'content', content: { type: 'text', text: 'before' } },
        { type: 'content', content: { type: 'text', text: 'one two\n[exited with code 0]' } },
      ],
    });
    expect(schema.errors('SessionNotification', last.params)).toEqual([]);
    await agent.request('terminal/release', { sessionId: 's1', terminalId });
    expect(editor.received.some((m) => String(m.method).startsWith('terminal/'))).toBe(false);
  });

  test('a $/cancel_request for a pending wait is answered -32800 and not forwarded; others are forwarded', async () => {
    const created = await agent.request('terminal/create', {
      sessionId: 's1',
      command: 'sleep',
      args: ['30'],
    });
    const terminalId = (created.result as Json).terminalId as string;
    const id = agent.start('terminal/wait_for_exit', { sessionId: 's1', terminalId });
    agent.send({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: id } });
    expect(((await agent.response(id)).error as Json).code).toBe(-32800);
    agent.send({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: 'editor-side' } });
    await editor.waitFor((m) => m.method === '$/cancel_request');
    expect(editor.received.filter((m) => m.method === '$/cancel_request')).toHaveLength(1);
  });

  test('shutdown kills and releases the terminals of every session', async () => {
    const a = await agent.request('terminal/create', { sessionId: 'A', command: 'sleep', args: ['30'] });
    const b = await agent.request('terminal/create', { sessionId: 'B', command: 'sleep', args: ['30'] });
    editor.close();
    expect(await proxy.closed).toBe('editor');
    await proxy.shutdown();
    for (const [sessionId, response] of [
      ['A', a],
      ['B', b],
    ] as const) {
      const terminalId = (response.result as Json).terminalId as string;
      const gone = await agent.request('terminal/output', { sessionId, terminalId });
      expect((gone.error as Json).code).toBe(-32002);
    }
  });
});

describe('AcpProxy turn boundaries', () => {
  test("a turn's pending tool call updates reach the editor before the turn's answer", async () => {
    const ed = new TestPeer();
    const ag = new TestPeer();
    const slow = new AcpProxy(host, new AjvSchemaValidator(), { intervalMs: 60_000 }).connect(
      ed.channel,
      ag.channel,
    );
    ed.send({
      jsonrpc: '2.0',
      id: 'turn-1',
      method: 'session/prompt',
      params: { sessionId: 's1', prompt: [] },
    });
    await ag.waitFor((m) => m.id === 'turn-1');
    const created = await ag.request('terminal/create', {
      sessionId: 's1',
      command: 'printf one; sleep 0.2; printf " two"',
    });
    const terminalId = (created.result as Json).terminalId as string;
    const update = {
      sessionUpdate: 'tool_call',
      toolCallId: 'c1',
      title: 'run',
      content: [{ type: 'terminal', terminalId }],
    };
    ag.send({ jsonrpc: '2.0', method: 'session/update', params: { sessionId: 's1', update } });
    await ed.waitFor((m) => m.method === 'session/update');
    await ag.request('terminal/wait_for_exit', { sessionId: 's1', terminalId });
    await new Promise((resolve) => setTimeout(resolve, 50));
    ag.send({ jsonrpc: '2.0', id: 'turn-1', result: { stopReason: 'end_turn' } });
    const answer = await ed.waitFor((m) => m.id === 'turn-1');
    const before = ed.received.slice(0, ed.received.indexOf(answer));
    const texts = before.filter((m) => m.method === 'session/update').flatMap(textsOf);
    expect(texts.at(-1)).toContain('one two');
    await slow.shutdown();
  });
});

describe('AcpProxy flow control', () => {
  test('an editor that stops reading pauses the agent until its writes drain', async () => {
    const stalled: (() => void)[] = [];
    let forwarded = 0;
    const slowEditor: MessageChannel = {
      start: () => undefined,
      send: () =>
        new Promise<void>((resolve) => {
          forwarded++;
          stalled.push(resolve);
        }),
      close: async () => undefined,
    };
    const states: string[] = [];
    const agentSide = new TestPeer();
    agentSide.channel.pause = () => states.push('paused');
    agentSide.channel.resume = () => states.push('resumed');
    const MAX_QUEUED_MESSAGES = 32;
    const connection = new AcpProxy(host, new AjvSchemaValidator(), {
      maxQueuedMessages: MAX_QUEUED_MESSAGES,
    }).connect(slowEditor, agentSide.channel);
    const chunk = {
      sessionId: 's',
      update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'x' } },
    };
    for (let i = 0; i < MAX_QUEUED_MESSAGES + 10; i++) {
      agentSide.send({ jsonrpc: '2.0', method: 'session/update', params: chunk });
    }
    expect(forwarded).toBe(MAX_QUEUED_MESSAGES + 10);
    expect(states).toEqual(['paused']);
    // The editor reads again: every write settles and the agent is resumed once.
    for (const resolve of stalled.splice(0)) resolve();
    await new Promise((resolve) => setImmediate(resolve));
    expect(states).toEqual(['paused', 'resumed']);
    await connection.shutdown();
  });

  test('a side that leaves its writes unread past the stall timeout ends the conversation', async () => {
    const neverReads: MessageChannel = {
      start: () => undefined,
      send: () => new Promise<void>(() => undefined),
      close: async () => undefined,
    };
    const agentSide = new TestPeer();
    let paused = false;
    agentSide.channel.pause = () => {
      paused = true;
    };
    const connection = new AcpProxy(host, new AjvSchemaValidator(), {
      maxQueuedMessages: 4,
      stallTimeoutMs: 50,
    }).connect(neverReads, agentSide.channel);
    for (let i = 0; i < 5; i++)
      agentSide.send({ jsonrpc: '2.0', method: 'session/update', params: { sessionId: 's', n: i } });
    expect(paused).toBe(true);
    await expect(connection.closed).resolves.toBe('editor');
    await connection.shutdown();
  });
});
