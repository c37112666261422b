import { TermhostError } from '@termgate/termhost';
import { AjvSchemaValidator } from '../../src/adapters/ajv-schema-validator.js';
import { type McpConnection, McpServer } from '../../src/mcp/mcp-server.js';
import { InMemoryChannel, type TestClient } from '../support/in-memory-channel.js';
import { ScriptedTerminalHost } from '../support/scripted-terminal-host.js';

const MODERN = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'test-client', version: '9.9.9' },
};
const SERVER_INFO = { name: 'termgate', version: '0.1.0-test' };

/** By default terminal_create returns at once here (`waitSeconds: 0`), as the tests drive exits by hand. */
function setup(options: Partial<ConstructorParameters<typeof McpServer>[2]> = {}): {
  host: ScriptedTerminalHost;
  client: TestClient;
  connection: McpConnection;
} {
  const host = new ScriptedTerminalHost();
  const server = new McpServer(host, new AjvSchemaValidator(), {
    serverInfo: SERVER_INFO,
    progressIntervalMs: 20,
    defaultCreateWaitSeconds: 0,
    ...options,
  });
  const channel = new InMemoryChannel();
  const connection = server.connect(channel);
  return { host, client: channel.client, connection };
}

async function call(
  client: TestClient,
  id: number | string,
  name: string,
  args: object,
  meta: object = MODERN,
) {
  return client.request(id, 'tools/call', { name, arguments: args, _meta: meta });
}

function structured(response: Record<string, unknown>): Record<string, unknown> {
  return (response.result as Record<string, unknown>).structuredContent as Record<string, unknown>;
}

describe('McpServer, modern era (2026-07-28)', () => {
  it('answers server/discover with the required fields and serverInfo in _meta', async () => {
    const { client } = setup();
    const response = await client.request('d1', 'server/discover', { _meta: MODERN });
    expect(response).toEqual({
      jsonrpc: '2.0',
      id: 'd1',
      result: {
        resultType: 'complete',
        supportedVersions: ['2026-07-28'],
        capabilities: { tools: {} },
        instructions: expect.stringContaining('terminal_create'),
        ttlMs: expect.any(Number),
        cacheScope: 'public',
        _meta: { 'io.modelcontextprotocol/serverInfo': SERVER_INFO },
      },
    });
  });

  it('serves a request without clientInfo', async () => {
    const { client } = setup();
    const { 'io.modelcontextprotocol/clientInfo': _omitted, ...meta } = MODERN;
    const response = await client.request(1, 'tools/list', { _meta: meta });
    expect((response.result as { resultType: string }).resultType).toBe('complete');
  });

  it.each([
    ['missing clientCapabilities', { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' }],
    [
      'clientCapabilities not an object',
      {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': 'x',
      },
    ],
    ['protocolVersion not a string', { ...MODERN, 'io.modelcontextprotocol/protocolVersion': 20260728 }],
    ['clientInfo without a name', { ...MODERN, 'io.modelcontextprotocol/clientInfo': { version: '1' } }],
  ])('rejects a malformed envelope (%s) with -32602', async (_label, meta) => {
    const { client } = setup();
    const response = await client.request(7, 'tools/list', { _meta: meta });
    expect(response.id).toBe(7);
    expect((response.error as { code: number }).code).toBe(-32602);
  });

  it('answers an unserved version with -32022 naming supported and requested', async () => {
    const { client } = setup();
    for (const version of ['1900-01-01', '2025-11-25']) {
      const response = await client.request(version, 'server/discover', {
        _meta: { ...MODERN, 'io.modelcontextprotocol/protocolVersion': version },
      });
      expect(response.error).toEqual({
        code: -32022,
        message: 'Unsupported protocol version',
        data: { supported: ['2026-07-28'], requested: version },
      });
    }
  });

  it.each([
    'initialize',
    'ping',
    'logging/setLevel',
    'prompts/list',
    'resources/list',
    'notifications/initialized',
  ])('answers the removed or unadvertised method %s with -32601', async (method) => {
    const { client } = setup();
    const response = await client.request(3, method, { _meta: MODERN });
    expect(response.error).toEqual({ code: -32601, message: `Method not found: ${method}` });
  });

  it('lists the five tools in order with ttlMs and cacheScope, and rejects cursors', async () => {
    const { client } = setup();
    const response = await client.request(2, 'tools/list', { _meta: MODERN });
    const result = response.result as {
      tools: { name: string; annotations: object; outputSchema: { type: string } }[];
    };
    expect(result.tools.map((t) => t.name)).toEqual([
      'terminal_create',
      'terminal_output',
      'terminal_wait_for_exit',
      'terminal_kill',
      'terminal_release',
    ]);
    expect(result).toMatchObject({ resultType: 'complete', ttlMs: expect.any(Number), cacheScope: 'public' });
    expect(result.tools[0]!.annotations).toMatchObject({
      destructiveHint: true,
      openWorldHint: true,
      readOnlyHint: false,
    });
    expect(result.tools[1]!.annotations).toMatchObject({ readOnlyHint: true });
    expect(result.tools[2]!.annotations).toMatchObject({ readOnlyHint: true });
    expect(result.tools[3]!.annotations).toMatchObject({ destructiveHint: true });
    expect(result.tools[4]!.annotations).toMatchObject({ destructiveHint: true });
    expect(result.tools.every((t) => t.outputSchema.type === 'object')).toBe(true);
    const paged = await client.request(3, 'tools/list', { cursor: 'abc', _meta: MODERN });
    expect((paged.error as { code: number }).code).toBe(-32602);
  });

  it('acknowledges subscriptions/listen, holds it open, and closes it with a complete result on shutdown', async () => {
    const { client, connection } = setup();
    client.send({
      jsonrpc: '2.0',
      id: 'L',
      method: 'subscriptions/listen',
      params: { _meta: MODERN, notifications: {} },
    });
    const ack = await client.waitFor((m) => m.method === 'notifications/subscriptions/acknowledged');
    expect(ack.params).toEqual({
      _meta: { 'io.modelcontextprotocol/subscriptionId': 'L' },
      notifications: {},
    });
    await client.request('p', 'tools/list', { _meta: MODERN });
    expect(client.received.some((m) => m.id === 'L')).toBe(false);
    await connection.shutdown();
    expect(await client.response('L')).toEqual({
      jsonrpc: '2.0',
      id: 'L',
      result: {
        resultType: 'complete',
        _meta: {
          'io.modelcontextprotocol/subscriptionId': 'L',
          'io.modelcontextprotocol/serverInfo': SERVER_INFO,
        },
      },
    });
  });

  it('sends nothing more for a listen the client cancelled', async () => {
    const { client, connection } = setup();
    client.send({
      jsonrpc: '2.0',
      id: 9,
      method: 'subscriptions/listen',
      params: { _meta: MODERN, notifications: {} },
    });
    await client.waitFor((m) => m.method === 'notifications/subscriptions/acknowledged');
    client.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 9 } });
    await connection.shutdown();
    await client.request('after', 'tools/list', { _meta: MODERN });
    expect(client.received.filter((m) => m.id === 9)).toEqual([]);
  });

  it('stamps resultType and serverInfo on tool results, including isError ones', async () => {
    const { client } = setup();
    const ok = await call(client, 1, 'terminal_create', { command: 'echo hi' });
    const started = {
      terminalId: 't1',
      running: true,
      exitCode: null,
      signal: null,
      timedOut: false,
      output: '',
      totalBytes: 0,
    };
    expect(ok.result).toMatchObject({
      resultType: 'complete',
      structuredContent: started,
      content: expect.arrayContaining([{ type: 'text', text: JSON.stringify(started) }]),
      _meta: { 'io.modelcontextprotocol/serverInfo': SERVER_INFO },
    });
    const bad = await call(client, 2, 'terminal_output', { terminalId: 'nope' });
    expect(bad.result).toMatchObject({ resultType: 'complete', isError: true });
  });

  it('passes the client name and era to the host', async () => {
    const { client, host } = setup();
    await call(client, 1, 'terminal_create', { command: 'true' });
    expect(host.calls[0]!.caller).toEqual({
      protocol: 'mcp/2026-07-28',
      clientName: 'test-client',
      clientVersion: '9.9.9',
    });
  });
});

describe('McpServer, legacy era (2025-11-25)', () => {
  it.each(['2025-11-25', '2025-06-18', '2024-11-05', '2026-07-28'])(
    'answers initialize asking %s with 2025-11-25',
    async (version) => {
      const { client } = setup();
      const response = await client.request(1, 'initialize', {
        protocolVersion: version,
        capabilities: {},
        clientInfo: { name: 'claude-code', version: '2.0.0' },
      });
      expect(response.result).toEqual({
        protocolVersion: '2025-11-25',
        capabilities: { tools: {} },
        serverInfo: SERVER_INFO,
        instructions: expect.any(String),
      });
    },
  );

  it('keeps initialize working after a server/discover probe', async () => {
    const { client } = setup();
    await client.request(1, 'server/discover', { _meta: MODERN });
    const init = await client.request(2, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'c', version: '1' },
    });
    expect((init.result as { protocolVersion: string }).protocolVersion).toBe('2025-11-25');
  });

  it('answers ping with {} and serves tools without resultType, ttlMs or cacheScope, even before initialize', async () => {
    const { client, host } = setup();
    expect((await client.request('1', 'ping')).result).toEqual({});
    const list = (await client.request(2, 'tools/list')).result as Record<string, unknown>;
    expect(Object.keys(list)).toEqual(['tools']);
    const created = (
      await client.request(3, 'tools/call', { name: 'terminal_create', arguments: { command: 'true' } })
    ).result as Record<string, unknown>;
    expect(created).toEqual({
      content: [
        { type: 'text', text: expect.stringMatching(/^\{"terminalId":"t1","running":true,/) },
        { type: 'text', text: expect.stringMatching(/^Started; it keeps running/) },
      ],
      structuredContent: expect.objectContaining({ terminalId: 't1', running: true }),
    });
    expect(host.calls[0]!.caller).toEqual({ protocol: 'mcp/2025-11-25' });
  });

  it('answers server/discover without a claim with -32601', async () => {
    const { client } = setup();
    expect((await client.request(1, 'server/discover')).error).toEqual({
      code: -32601,
      message: 'Method not found: server/discover',
    });
  });

  it('remembers the initialize clientInfo for the audit caller', async () => {
    const { client, host } = setup();
    await client.request(1, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'cc', version: '2' },
    });
    client.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await client.request(2, 'tools/call', { name: 'terminal_create', arguments: { command: 'true' } });
    expect(host.calls[0]!.caller).toEqual({
      protocol: 'mcp/2025-11-25',
      clientName: 'cc',
      clientVersion: '2',
    });
  });
});

describe('McpServer, JSON-RPC rules', () => {
  it('answers framing errors with id null', async () => {
    const { client } = setup();
    client.framingError({ kind: 'parse-error', message: 'Unexpected token' });
    client.framingError({ kind: 'line-too-long', bytes: 5_000_000, maxLineBytes: 4_194_304 });
    await client.waitFor(() => client.received.length === 2);
    expect(client.received.map((m) => [m.id, (m.error as { code: number }).code])).toEqual([
      [null, -32700],
      [null, -32600],
    ]);
  });

  it.each([
    ['a batch', [{ jsonrpc: '2.0', id: 1, method: 'ping' }], null],
    ['a scalar', 42, null],
    ['no method', { jsonrpc: '2.0', id: 5 }, 5],
    ['a wrong jsonrpc', { jsonrpc: '1.0', id: 6, method: 'ping' }, 6],
    ['a null id', { jsonrpc: '2.0', id: null, method: 'ping' }, null],
    ['scalar params', { jsonrpc: '2.0', id: 8, method: 'ping', params: 3 }, 8],
  ])('answers %s with -32600', async (_label, message, id) => {
    const { client } = setup();
    client.send(message);
    const answer = await client.waitFor(() => true);
    expect(answer).toMatchObject({ jsonrpc: '2.0', id, error: { code: -32600 } });
  });

  it('preserves id types and never answers notifications or responses', async () => {
    const { client } = setup();
    client.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    client.send({ jsonrpc: '2.0', method: 'notifications/unknown', params: {} });
    client.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'ghost' } });
    client.send({ jsonrpc: '2.0', id: 77, result: {} });
    await client.request('1', 'ping');
    await client.request(1, 'ping');
    expect(client.received.map((m) => m.id)).toEqual(['1', 1]);
  });

  it('answers an unknown method with -32601 naming it, in both eras', async () => {
    const { client } = setup();
    expect((await client.request(1, 'frobnicate')).error).toEqual({
      code: -32601,
      message: 'Method not found: frobnicate',
    });
    expect((await client.request(2, 'frobnicate', { _meta: MODERN })).error).toEqual({
      code: -32601,
      message: 'Method not found: frobnicate',
    });
  });
});

describe('McpServer, tools/call', () => {
  it('answers an unknown tool with -32602 and bad arguments with an isError result naming the field', async () => {
    const { client } = setup();
    expect((await call(client, 1, 'rm_rf', {})).error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('rm_rf'),
    });
    const missing = (await call(client, 2, 'terminal_create', {})).result as {
      isError: boolean;
      content: { text: string }[];
    };
    expect(missing.isError).toBe(true);
    expect(missing.content[0]!.text).toContain('"command" is required');
    const wrongType = (await call(client, 3, 'terminal_create', { command: 'ls', env: { A: 1 } })).result as {
      content: { text: string }[];
    };
    expect(wrongType.content[0]!.text).toContain('"env.A" must be string');
    const extra = (await call(client, 4, 'terminal_kill', { terminalId: 't', force: true })).result as {
      content: { text: string }[];
    };
    expect(extra.content[0]!.text).toContain('"force" is not a known property');
    expect(
      (await client.request(5, 'tools/call', { name: 'terminal_kill', arguments: [], _meta: MODERN })).error,
    ).toMatchObject({
      code: -32602,
    });
  });

  it('turns a policy refusal into an isError result a model can act on', async () => {
    const { client, host } = setup();
    host.refuseWith = new TermhostError('GATE_DENIED', 'create denied: denied: sudo is not allowed', {
      reason: 'denied: sudo is not allowed',
      ruleIds: ['no-sudo'],
    });
    const result = (await call(client, 1, 'terminal_create', { command: 'sudo id' })).result as {
      isError: boolean;
      content: { text: string }[];
    };
    expect(result.isError).toBe(true);
    expect(result.content[0]!.text).toMatch(
      /Denied by policy: sudo is not allowed.*no-sudo.*Nothing was run/,
    );
  });

  it('streams output as coalesced, strictly increasing progress, all before the response', async () => {
    const { client, host } = setup();
    await call(client, 1, 'terminal_create', { command: 'build' });
    client.send({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: {
        name: 'terminal_wait_for_exit',
        arguments: { terminalId: 't1' },
        _meta: { ...MODERN, progressToken: 'tok' },
      },
    });
    await new Promise((resolve) => setImmediate(resolve));
    const euro = Buffer.from('€');
    host.write('t1', 'line 1\n');
    host.write('t1', Buffer.concat([Buffer.from('line 2 '), euro.subarray(0, 1)]));
    host.write('t1', Buffer.concat([euro.subarray(1), Buffer.from('\n')]));
    await client.waitFor((m) => m.method === 'notifications/progress');
    for (let i = 0; i < 50; i++) host.write('t1', `burst ${i}\n`);
    host.exit('t1', { exitCode: 0, signal: null, timedOut: false });
    const response = await client.response(2);
    expect(structured(response)).toEqual({
      running: false,
      exitCode: 0,
      signal: null,
      timedOut: false,
      output: (await host.output('t1')).output,
      totalBytes: (await host.output('t1')).totalBytes,
    });
    const responseIndex = client.received.indexOf(response);
    const progress = client.received.filter((m) => m.method === 'notifications/progress');
    expect(progress.every((m) => client.received.indexOf(m) < responseIndex)).toBe(true);
    const params = progress.map(
      (m) => m.params as { progressToken: string; progress: number; message: string },
    );
    expect(params.every((p) => p.progressToken === 'tok')).toBe(true);
    const values = params.map((p) => p.progress);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    expect(new Set(values).size).toBe(values.length);
    expect(values.at(-1)).toBe((await host.output('t1')).totalBytes);
    expect(params.map((p) => p.message).join('')).toBe((await host.output('t1')).output);
    expect(progress.length).toBeLessThan(53);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(client.received.at(-1)).toBe(response);
  });

  it('sends nothing for a cancelled wait and leaves the command running', async () => {
    const { client, host } = setup();
    await call(client, 1, 'terminal_create', { command: 'sleep' });
    client.send({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: {
        name: 'terminal_wait_for_exit',
        arguments: { terminalId: 't1' },
        _meta: { ...MODERN, progressToken: 5 },
      },
    });
    await new Promise((resolve) => setImmediate(resolve));
    client.send({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 2, reason: 'user' },
    });
    host.write('t1', 'after cancel\n');
    await new Promise((resolve) => setTimeout(resolve, 60));
    await call(client, 3, 'terminal_output', {});
    expect(client.received.filter((m) => m.id === 2 || m.method === 'notifications/progress')).toEqual([]);
    expect((await host.output('t1')).exitStatus).toBeNull();
    expect(host.calls.map((c) => c.verb)).toEqual(['create']);
  });

  it.each([
    ['modern', MODERN],
    ['legacy', undefined],
  ])('sends nothing for a cancelled %s call that still completes normally', async (_era, meta) => {
    // A kill that ignores the abort: the call completes, its result must not be sent.
    let finishKill!: () => void;
    const killing = new Promise<void>((resolve) => (finishKill = resolve));
    class SlowKillHost extends ScriptedTerminalHost {
      override async kill(id: string): Promise<void> {
        await killing;
        return super.kill(id);
      }
    }
    const host = new SlowKillHost();
    const server = new McpServer(host, new AjvSchemaValidator(), { serverInfo: SERVER_INFO });
    const channel = new InMemoryChannel();
    server.connect(channel);
    const client = channel.client;
    if (meta === undefined) {
      await client.request(0, 'initialize', {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'legacy', version: '1' },
      });
      client.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    }
    await client.request(1, 'tools/call', {
      name: 'terminal_create',
      arguments: { command: 'sleep', waitSeconds: 0 },
      ...(meta !== undefined && { _meta: meta }),
    });
    client.send({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: {
        name: 'terminal_kill',
        arguments: { terminalId: 't1' },
        ...(meta !== undefined && { _meta: meta }),
      },
    });
    await new Promise((resolve) => setImmediate(resolve));
    client.send({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 2, reason: 'user' },
    });
    finishKill();
    while (host.terminals.get('t1')?.exit === null) await new Promise((resolve) => setTimeout(resolve, 5));
    // A later round trip: once it is answered, the kill's completion has been handled.
    await client.request(3, 'ping', meta === undefined ? undefined : { _meta: meta });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(client.received.filter((m) => m.id === 2)).toEqual([]);
    expect(host.terminals.get('t1')?.exit).toMatchObject({ signal: 'SIGTERM' });
  });

  it('never runs a request cancelled while it waited for a slot (flow control), and sends nothing for it', async () => {
    let finishKill!: () => void;
    const killing = new Promise<void>((resolve) => (finishKill = resolve));
    class SlowKillHost extends ScriptedTerminalHost {
      override async kill(id: string): Promise<void> {
        await killing;
        return super.kill(id);
      }
    }
    const host = new SlowKillHost();
    const server = new McpServer(host, new AjvSchemaValidator(), {
      serverInfo: SERVER_INFO,
      maxActiveRequests: 1,
    });
    const channel = new InMemoryChannel();
    server.connect(channel);
    const client = channel.client;
    await call(client, 1, 'terminal_create', { command: 'sleep', waitSeconds: 0 });
    // The kill holds the only slot; the second create waits for it, and is cancelled there.
    const killed = call(client, 2, 'terminal_kill', { terminalId: 't1' });
    client.send({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'terminal_create', arguments: { command: 'touch x', waitSeconds: 0 }, _meta: MODERN },
    });
    client.send({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 3, reason: 'user' },
    });
    finishKill();
    expect((await killed).result).toMatchObject({ structuredContent: {} });
    await call(client, 4, 'terminal_output', { terminalId: 't1' });
    expect(client.received.filter((m) => m.id === 3)).toEqual([]);
    expect(host.calls.filter((c) => c.verb === 'create')).toHaveLength(1);
  });

  it('returns running:true when timeoutSeconds passes first, without killing', async () => {
    const { client, host } = setup();
    await call(client, 1, 'terminal_create', { command: 'sleep' });
    const response = await call(client, 2, 'terminal_wait_for_exit', {
      terminalId: 't1',
      timeoutSeconds: 0.05,
    });
    expect(structured(response)).toEqual({
      running: true,
      exitCode: null,
      signal: null,
      timedOut: false,
      output: '',
      totalBytes: 0,
    });
    const texts = (response.result as { content: { text: string }[] }).content.map((c) => c.text);
    expect(texts[1]).toMatch(/Still running after 0.05 s; it was not stopped/);
    expect((await host.output('t1')).exitStatus).toBeNull();
  });

  it('handles requests concurrently: a pending wait delays nothing', async () => {
    const { client, host } = setup();
    await call(client, 1, 'terminal_create', { command: 'sleep' });
    client.send({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'terminal_wait_for_exit', arguments: { terminalId: 't1' }, _meta: MODERN },
    });
    const output = await call(client, 3, 'terminal_output', { terminalId: 't1' });
    expect(structured(output)).toMatchObject({ exitStatus: null });
    expect(client.received.some((m) => m.id === 2)).toBe(false);
    host.exit('t1', { exitCode: 3, signal: null, timedOut: false });
    expect(structured(await client.response(2))).toMatchObject({ exitCode: 3 });
  });

  it('returns {} for kill and release, and an isError for a released id', async () => {
    const { client } = setup();
    await call(client, 1, 'terminal_create', { command: 'sleep' });
    expect(structured(await call(client, 2, 'terminal_kill', { terminalId: 't1' }))).toEqual({});
    expect(structured(await call(client, 3, 'terminal_output', { terminalId: 't1' }))).toMatchObject({
      exitStatus: { exitCode: null, signal: 'SIGTERM', timedOut: false },
    });
    expect(structured(await call(client, 4, 'terminal_release', { terminalId: 't1' }))).toEqual({});
    const gone = (await call(client, 5, 'terminal_output', { terminalId: 't1' })).result as {
      isError: boolean;
      content: { text: string }[];
    };
    expect(gone.isError).toBe(true);
    expect(gone.content[0]!.text).toMatch(/Unknown terminal id/);
  });
});

describe('the sandbox, in the instructions and the tool descriptions', () => {
  const ON = {
    tier: 'namespaces' as const,
    protectGit: true,
    privateTmp: true,
    network: 'allowlist' as const,
  };
  const descriptionOf = async (client: TestClient, meta?: object) => {
    const list = (await client.request('l', 'tools/list', meta && { _meta: meta })).result as {
      tools: { name: string; description: string }[];
    };
    return list.tools.find((t) => t.name === 'terminal_create')!.description;
  };

  it('says, a sentence each, what it means for a model when it is on (both eras)', async () => {
    const { client } = setup({ sandbox: async () => ON });
    const discover = (await client.request('d', 'server/discover', { _meta: MODERN })).result as {
      instructions: string;
    };
    const init = (
      await client.request('i', 'initialize', {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'c', version: '1' },
      })
    ).result as { instructions: string };
    for (const text of [discover.instructions, init.instructions, await descriptionOf(client, MODERN)]) {
      expect(text).toContain('Commands run in a sandbox');
      expect(text).toContain('Git directories (.git) are read-only');
      expect(text).toContain('Read-only file system');
      expect(text).toContain('only the hosts the policy allowlists');
      expect(text).toContain('/tmp is private');
    }
    expect(await descriptionOf(client)).toContain('Commands run in a sandbox');
  });

  it('says nothing of a sandbox when it is off, or when its facts cannot be had', async () => {
    for (const sandbox of [async () => null, async () => Promise.reject(new Error('no policy'))]) {
      const { client } = setup({ sandbox });
      const discover = (await client.request('d', 'server/discover', { _meta: MODERN })).result as {
        instructions: string;
      };
      expect(discover.instructions).not.toMatch(/sandbox|read-only|allowlist|\/tmp/i);
      expect(await descriptionOf(client, MODERN)).not.toMatch(/sandbox|allowlist|\/tmp is private/i);
    }
  });

  it('names only what applies: no network at all, git left writable, /tmp shared', async () => {
    const { client } = setup({
      sandbox: async () => ({ tier: 'namespaces', protectGit: false, privateTmp: false, network: 'none' }),
    });
    const description = await descriptionOf(client, MODERN);
    expect(description).toContain('There is no network');
    expect(description).not.toContain('.git');
    expect(description).not.toContain('/tmp');
  });

  it('under the landlock tier, names the failures as that tier gives them', async () => {
    const { client } = setup({ sandbox: async () => ({ ...ON, tier: 'landlock' }) });
    const description = await descriptionOf(client, MODERN);
    expect(description).toContain('fail with "Permission denied"');
    expect(description).not.toContain('Read-only file system');
    expect(description).toContain('/tmp is not writable: use $TMPDIR');
    expect(description).not.toContain('/tmp is private');
    expect(description).toContain('Nothing can listen on a TCP port');
  });
});
