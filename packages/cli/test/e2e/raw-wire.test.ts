/**
 * Raw-wire tests against the built server (`packages/cli/dist/bin.js serve`):
 * JSON lines written to its stdin, every stdout line read back. One server per
 * describe block; the shutdown tests start their own.
 *
 * Negative checks ("nothing is sent for X") use a later request round trip as
 * the sync point: the server reads stdin in order, so once the answer to a
 * request sent after X has arrived, X has been dispatched.
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { isAlive } from '../../../../test-support/processes.js';
import {
  CLIENT_CAPABILITIES_KEY,
  isProgressFor,
  isResponseTo,
  LEGACY_VERSION,
  MODERN_VERSION,
  modern,
  modernMeta,
  PROTOCOL_VERSION_KEY,
  pause,
  type RequestId,
  removeAuditFiles,
  SERVER_INFO_KEY,
  SUBSCRIPTION_ID_KEY,
  structuredResult,
  TOOL_ANNOTATIONS,
  TOOL_NAMES,
  toolErrorText,
  type WireMessage,
  WireServer,
  waitUntilGone,
} from './support/wire-server.js';

// realpath: the policy compares a request's resolved cwd with the server's.
const scratch = realpathSync(mkdtempSync(path.join(tmpdir(), 'termgate-e2e-')));
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
  removeAuditFiles();
});

let gateCount = 0;
/** A fresh file path; a command can `while [ ! -e F ]` on it until the test creates it. */
function gatePath(): string {
  gateCount += 1;
  return path.join(scratch, `gate-${gateCount}`);
}

function openGate(file: string): void {
  writeFileSync(file, '');
}

/** `tools/call` in the modern era unless `legacy` is set. */
function callTool(
  server: WireServer,
  name: string,
  args: Record<string, unknown>,
  options: { legacy?: boolean; progressToken?: RequestId; id?: RequestId } = {},
): Promise<WireMessage> {
  const extraMeta: Record<string, unknown> =
    options.progressToken === undefined ? {} : { progressToken: options.progressToken };
  let params: Record<string, unknown>;
  if (options.legacy === true) {
    params = { name, arguments: args };
    if (options.progressToken !== undefined) params._meta = extraMeta;
  } else {
    params = modern({ name, arguments: args }, extraMeta);
  }
  return server.request('tools/call', params, options.id ?? server.id());
}

/** Starts a command without waiting for it (`waitSeconds: 0` unless `args` names one): the four-call pattern. */
async function createTerminal(server: WireServer, args: Record<string, unknown>): Promise<string> {
  const { terminalId } = structuredResult(
    await callTool(server, 'terminal_create', { waitSeconds: 0, ...args }),
  );
  if (typeof terminalId !== 'string' || terminalId.length === 0) {
    throw new Error(`terminal_create returned no terminalId: ${JSON.stringify(terminalId)}`);
  }
  return terminalId;
}

async function output(server: WireServer, terminalId: string): Promise<Record<string, unknown>> {
  return structuredResult(await callTool(server, 'terminal_output', { terminalId }));
}

/** Polls `terminal_output` until `predicate` holds (pauses are for polling only; the guard is a timeout). */
async function outputUntil(
  server: WireServer,
  terminalId: string,
  predicate: (out: Record<string, unknown>) => boolean,
  timeoutMs = 10_000,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const out = await output(server, terminalId);
    if (predicate(out)) return out;
    if (Date.now() > deadline) throw new Error(`terminal output never matched: ${JSON.stringify(out)}`);
    await pause(25);
  }
}

async function killAndRelease(server: WireServer, terminalId: string): Promise<void> {
  await callTool(server, 'terminal_kill', { terminalId });
  await callTool(server, 'terminal_release', { terminalId });
}

/** A round trip whose answer proves every earlier line has been dispatched. */
async function sync(server: WireServer): Promise<void> {
  const response = await server.request('ping');
  expect(response.result).toEqual({});
}

function expectError(response: WireMessage, code: number): void {
  expect(response.error).toBeDefined();
  expect(response.result).toBeUndefined();
  expect(response.error?.code).toBe(code);
  expect(typeof response.error?.message).toBe('string');
}

function expectModernResult(response: WireMessage): void {
  expect(response.result).toMatchObject({
    resultType: 'complete',
    _meta: { [SERVER_INFO_KEY]: { name: 'termgate', version: expect.any(String) } },
  });
}

function expectLegacyResult(response: WireMessage): void {
  expect(response.result).toBeDefined();
  expect(response.result).not.toHaveProperty('resultType');
  expect(response.result).not.toHaveProperty('ttlMs');
  expect(response.result).not.toHaveProperty('cacheScope');
}

describe('JSON-RPC framing', () => {
  let server: WireServer;
  // Debug logging on: any log line that leaked to stdout would fail the last test.
  beforeAll(() => {
    server = WireServer.start(['--log-level', 'debug']);
  });
  afterAll(() => server.dispose());

  test('an unparseable line is answered with -32700 and id null', async () => {
    const from = server.mark();
    server.sendRaw('{"jsonrpc":"2.0","id":1,"method":\n');
    const answer = await server.waitFor((m) => 'error' in m, 'parse error', { from });
    expect(answer).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
  });

  test('a JSON array (batch) is answered with one -32600, id null, and its contents are not run', async () => {
    const from = server.mark();
    server.sendRaw('[{"jsonrpc":"2.0","id":"inside-batch","method":"ping"}]\n');
    const answer = await server.waitFor((m) => 'error' in m, 'batch rejection', { from });
    expect(answer).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    await sync(server);
    expect(server.messagesSince(from).filter((m) => m.id === 'inside-batch')).toEqual([]);
    expect(server.messagesSince(from).filter((m) => 'error' in m)).toHaveLength(1);
  });

  test.each([
    ['an object without method or id', '{"hello":"world"}'],
    ['a bare jsonrpc marker', '{"jsonrpc":"2.0"}'],
  ])('%s is answered with -32600 and id null', async (_label, line) => {
    const from = server.mark();
    server.sendRaw(`${line}\n`);
    const answer = await server.waitFor((m) => 'error' in m, 'invalid request', { from });
    expect(answer).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
  });

  test('an unknown method is answered with -32601 naming the method (both eras)', async () => {
    const legacy = await server.request('termgate/no-such-method', {});
    expectError(legacy, -32601);
    expect(JSON.stringify(legacy.error)).toContain('termgate/no-such-method');

    const modernAnswer = await server.request('termgate/also-missing', modern());
    expectError(modernAnswer, -32601);
    expect(JSON.stringify(modernAnswer.error)).toContain('termgate/also-missing');
  });

  test('request ids are echoed with their JSON type preserved', async () => {
    const from = server.mark();
    server.send({ jsonrpc: '2.0', id: '1', method: 'ping' });
    server.send({ jsonrpc: '2.0', id: 1, method: 'ping' });
    server.send({ jsonrpc: '2.0', id: '7', method: 'termgate/no-such-method' });
    server.send({ jsonrpc: '2.0', id: 0, method: 'ping' });
    const asString = await server.waitFor((m) => isResponseTo(m, '1'), 'id "1"', { from });
    const asNumber = await server.waitFor((m) => isResponseTo(m, 1), 'id 1', { from });
    const errorId = await server.waitFor((m) => isResponseTo(m, '7'), 'id "7"', { from });
    const zero = await server.waitFor((m) => isResponseTo(m, 0), 'id 0', { from });
    expect(asString).toEqual({ jsonrpc: '2.0', id: '1', result: {} });
    expect(asNumber).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    expect(errorId.id).toBe('7');
    expect(zero).toEqual({ jsonrpc: '2.0', id: 0, result: {} });
    // exactly one answer per request
    expect(server.messagesSince(from)).toHaveLength(4);
  });

  test('notifications are never answered, whatever they are', async () => {
    const from = server.mark();
    server.sendNotification('notifications/initialized');
    server.sendNotification('notifications/cancelled', { requestId: 'never-sent', reason: 'test' });
    server.sendNotification('notifications/termgate-unknown', {});
    server.sendNotification('notifications/progress', { progressToken: 'x', progress: 1 });
    // request methods sent without an id are notifications too
    server.sendNotification('tools/list', modern());
    server.sendNotification('tools/call', { name: 'terminal_output', arguments: { terminalId: 'nope' } });
    server.sendNotification('termgate/no-such-method');
    server.sendNotification('server/discover', modern());
    await sync(server);
    await sync(server);
    const seen = server.messagesSince(from);
    expect(seen).toHaveLength(2);
    expect(seen.every((m) => 'result' in m && typeof m.id === 'number')).toBe(true);
  });

  test('a line ending in \\r\\n is accepted', async () => {
    const from = server.mark();
    server.sendRaw('{"jsonrpc":"2.0","id":"crlf","method":"ping"}\r\n');
    const answer = await server.waitFor((m) => isResponseTo(m, 'crlf'), 'crlf ping', { from });
    expect(answer).toEqual({ jsonrpc: '2.0', id: 'crlf', result: {} });
  });

  test('an over-long line (5 MiB) gets an error with id null and the server keeps serving', async () => {
    const from = server.mark();
    const padding = 'x'.repeat(5 * 1024 * 1024);
    server.sendRaw(`{"jsonrpc":"2.0","id":"too-long","method":"ping","params":{"pad":"${padding}"}}\n`);
    const answer = await server.waitFor((m) => 'error' in m, 'over-long line rejection', { from });
    expect(answer.id).toBeNull();
    expect([-32600, -32700]).toContain(answer.error?.code);
    const after = await server.request('ping', undefined, 'after-long-line');
    expect(after.result).toEqual({});
    const seen = server.messagesSince(from);
    expect(seen.filter((m) => m.id === 'too-long')).toEqual([]);
    for (const m of seen.filter((m) => 'error' in m)) {
      expect(m.id).toBeNull();
      expect([-32600, -32700]).toContain(m.error?.code);
    }
  });

  test('every line written to stdout so far was a JSON-RPC 2.0 message', async () => {
    await sync(server);
    expect(server.nonJsonLines).toEqual([]);
    expect(server.lines.length).toBeGreaterThan(0);
    for (const message of server.messages) expect(message.jsonrpc).toBe('2.0');
  });
});

describe('modern era (2026-07-28)', () => {
  let server: WireServer;
  beforeAll(() => {
    // Started in the scratch directory, so the default policy lets commands run there.
    server = WireServer.start([], { cwd: scratch });
  });
  afterAll(() => server.dispose());

  test('server/discover answers the DiscoverResult', async () => {
    const answer = await server.request('server/discover', modern(), 'discover-1');
    expect(answer.id).toBe('discover-1');
    const result = answer.result as Record<string, unknown>;
    expect(result).toMatchObject({
      resultType: 'complete',
      supportedVersions: [MODERN_VERSION],
      capabilities: { tools: {} },
      instructions: expect.any(String),
      ttlMs: expect.any(Number),
      cacheScope: expect.stringMatching(/^(public|private)$/),
      _meta: { [SERVER_INFO_KEY]: { name: 'termgate', version: expect.any(String) } },
    });
    expect(result.supportedVersions).toEqual([MODERN_VERSION]);
    expect(Number.isInteger(result.ttlMs) && (result.ttlMs as number) >= 0).toBe(true);
    expect((result.instructions as string).length).toBeGreaterThan(0);
    expect(result).not.toHaveProperty('serverInfo');
    expect(result).not.toHaveProperty('protocolVersion');
  });

  test.each(['1900-01-01', LEGACY_VERSION, '2099-01-01'])(
    'a claim of unsupported version %s is answered with -32022 and data {supported, requested}',
    async (requested) => {
      for (const method of ['server/discover', 'tools/list']) {
        const answer = await server.request(method, {
          _meta: { ...modernMeta(), [PROTOCOL_VERSION_KEY]: requested },
        });
        expectError(answer, -32022);
        expect(answer.error?.data).toEqual({ supported: [MODERN_VERSION], requested });
      }
    },
  );

  test.each<[string, Record<string, unknown>]>([
    ['protocolVersion is a number', { [PROTOCOL_VERSION_KEY]: 20260728, [CLIENT_CAPABILITIES_KEY]: {} }],
    ['protocolVersion is null', { [PROTOCOL_VERSION_KEY]: null, [CLIENT_CAPABILITIES_KEY]: {} }],
    ['clientCapabilities is missing', { [PROTOCOL_VERSION_KEY]: MODERN_VERSION }],
    [
      'clientCapabilities is a string',
      { [PROTOCOL_VERSION_KEY]: MODERN_VERSION, [CLIENT_CAPABILITIES_KEY]: 'all' },
    ],
    [
      'clientCapabilities is null',
      { [PROTOCOL_VERSION_KEY]: MODERN_VERSION, [CLIENT_CAPABILITIES_KEY]: null },
    ],
    [
      'clientCapabilities is an array',
      { [PROTOCOL_VERSION_KEY]: MODERN_VERSION, [CLIENT_CAPABILITIES_KEY]: [] },
    ],
  ])('an envelope where %s is answered with -32602', async (_label, meta) => {
    for (const method of ['server/discover', 'tools/list']) {
      const id = `envelope-${server.id()}`;
      const answer = await server.request(method, { _meta: meta }, id);
      expect(answer.id).toBe(id);
      expectError(answer, -32602);
    }
  });

  test('an envelope without clientInfo is served', async () => {
    const answer = await server.request('tools/list', {
      _meta: { [PROTOCOL_VERSION_KEY]: MODERN_VERSION, [CLIENT_CAPABILITIES_KEY]: {} },
    });
    expectModernResult(answer);
    expect(answer.result?.tools).toHaveLength(TOOL_NAMES.length);
  });

  test.each([
    'initialize',
    'ping',
    'notifications/initialized',
    'logging/setLevel',
    'prompts/list',
    'resources/list',
  ])('%s with a modern claim is answered with -32601', async (method) => {
    const params =
      method === 'initialize'
        ? modern({
            protocolVersion: LEGACY_VERSION,
            capabilities: {},
            clientInfo: { name: 'x', version: '1' },
          })
        : method === 'logging/setLevel'
          ? modern({ level: 'debug' })
          : modern();
    const answer = await server.request(method, params);
    expectError(answer, -32601);
  });

  test('tools/list lists the five tools in order with schemas, annotations and cache fields', async () => {
    const answer = await server.request('tools/list', modern());
    expectModernResult(answer);
    const result = answer.result as Record<string, unknown>;
    expect(Number.isInteger(result.ttlMs) && (result.ttlMs as number) >= 0).toBe(true);
    expect(['public', 'private']).toContain(result.cacheScope);
    expect(result).not.toHaveProperty('nextCursor');
    const tools = result.tools as Array<Record<string, unknown>>;
    expect(tools.map((tool) => tool.name)).toEqual([...TOOL_NAMES]);
    for (const tool of tools) {
      const name = tool.name as (typeof TOOL_NAMES)[number];
      expect(typeof tool.title).toBe('string');
      expect((tool.description as string).length).toBeGreaterThan(0);
      expect(tool.inputSchema).toMatchObject({ type: 'object', additionalProperties: false });
      expect(tool.outputSchema).toMatchObject({ type: 'object' });
      expect(tool.annotations).toMatchObject(TOOL_ANNOTATIONS[name]);
    }
  });

  test('tool results carry resultType and serverInfo, errors included; unknown tools are -32602', async () => {
    const terminalId = await createTerminal(server, { command: 'true' });
    const wait = await callTool(server, 'terminal_wait_for_exit', { terminalId });
    expectModernResult(wait);
    expect(structuredResult(wait)).toMatchObject({ running: false, exitCode: 0, signal: null });

    const release = await callTool(server, 'terminal_release', { terminalId });
    expectModernResult(release);
    expect(structuredResult(release)).toEqual({});

    const unknownTerminal = await callTool(server, 'terminal_output', { terminalId });
    expectModernResult(unknownTerminal);
    expect(toolErrorText(unknownTerminal).length).toBeGreaterThan(0);

    const unknownTool = await callTool(server, 'terminal_teleport', {});
    expectError(unknownTool, -32602);
    expect(unknownTool.result).toBeUndefined();
  });

  test.each<[string, string, Record<string, unknown>, string]>([
    ['a missing required field', 'terminal_create', {}, 'command'],
    ['an unknown field', 'terminal_create', { command: 'true', colour: 'blue' }, 'colour'],
    ['a wrongly typed field', 'terminal_create', { command: 'true', args: 'not-an-array' }, 'args'],
    ['a wrongly typed env', 'terminal_create', { command: 'true', env: ['FOO=bar'] }, 'env'],
    [
      'a wrongly typed limit',
      'terminal_create',
      { command: 'true', outputByteLimit: 'lots' },
      'outputByteLimit',
    ],
    [
      'a wrongly typed timeout',
      'terminal_wait_for_exit',
      { terminalId: 't', timeoutSeconds: 'soon' },
      'timeoutSeconds',
    ],
    ['a missing terminal id', 'terminal_output', {}, 'terminalId'],
  ])('%s is an isError result naming the field', async (_label, tool, args, field) => {
    const answer = await callTool(server, tool, args);
    expectModernResult(answer);
    expect(toolErrorText(answer)).toContain(field);
  });

  test('tool failures are isError results: unknown terminal ids, spawn failures, policy refusals', async () => {
    for (const tool of ['terminal_output', 'terminal_wait_for_exit', 'terminal_kill', 'terminal_release']) {
      const answer = await callTool(server, tool, { terminalId: 'no-such-terminal' });
      expect(toolErrorText(answer).length).toBeGreaterThan(0);
    }
    const spawnFailure = await callTool(server, 'terminal_create', {
      command: path.join(scratch, 'no-such-program'),
      args: ['--version'],
    });
    expect(toolErrorText(spawnFailure).length).toBeGreaterThan(0);
    // the default policy refuses privilege escalation, with a reason the model can act on
    const refused = await callTool(server, 'terminal_create', { command: 'sudo id' });
    expectModernResult(refused);
    expect(toolErrorText(refused)).toMatch(/polic/i);
  });

  test('terminal_create honours args, cwd, env and reports exit codes', async () => {
    const withArgs = await createTerminal(server, { command: 'printf', args: ['%s|', 'a b', '$HOME'] });
    expect(
      structuredResult(await callTool(server, 'terminal_wait_for_exit', { terminalId: withArgs })),
    ).toMatchObject({ running: false, exitCode: 0 });
    expect(await output(server, withArgs)).toMatchObject({
      output: 'a b|$HOME|',
      truncated: false,
      exitStatus: { exitCode: 0, signal: null },
    });

    const withCwdEnv = await createTerminal(server, {
      command: 'printf "%s:%s" "$PWD" "$RUST_LOG"; exit 3',
      cwd: scratch,
      env: { RUST_LOG: 'from-env' }, // a variable the default policy lets clients set
    });
    expect(
      structuredResult(await callTool(server, 'terminal_wait_for_exit', { terminalId: withCwdEnv })),
    ).toMatchObject({ running: false, exitCode: 3, signal: null });
    const out = await output(server, withCwdEnv);
    expect(out.output).toBe(`${scratch}:from-env`);
    expect(out.exitStatus).toMatchObject({ exitCode: 3, signal: null });
    for (const id of [withArgs, withCwdEnv]) await callTool(server, 'terminal_release', { terminalId: id });
  });

  test('outputByteLimit keeps the newest bytes and reports the truncation', async () => {
    const text = '0123456789'.repeat(10);
    const terminalId = await createTerminal(server, { command: 'printf', args: [text], outputByteLimit: 10 });
    await callTool(server, 'terminal_wait_for_exit', { terminalId });
    const out = await output(server, terminalId);
    expect(out.truncated).toBe(true);
    expect(out.totalBytes).toBe(100);
    const kept = out.output as string;
    expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(10);
    expect(text.endsWith(kept)).toBe(true);
    expect(out.droppedBytes).toBe(100 - Buffer.byteLength(kept));
    await callTool(server, 'terminal_release', { terminalId });
  });

  test('terminal_wait_for_exit returns running:true when its timeout passes first', async () => {
    const terminalId = await createTerminal(server, { command: 'sleep', args: ['1000'] });
    const wait = await callTool(server, 'terminal_wait_for_exit', { terminalId, timeoutSeconds: 1 });
    expect(structuredResult(wait)).toMatchObject({ running: true, exitCode: null, signal: null });
    expect((await output(server, terminalId)).exitStatus).toBeNull();
    await killAndRelease(server, terminalId);
  });

  test('progress during a wait: strictly increasing byte counts, no byte lost, none after the response', async () => {
    const gate = gatePath();
    const terminalId = await createTerminal(server, {
      command: `while [ ! -e '${gate}' ]; do sleep 0.02; done; for i in 1 2 3 4 5 6; do printf 'line %s\\n' "$i"; sleep 0.1; done`,
    });
    const token = 4242; // an integer token must come back as an integer
    const from = server.mark();
    const waitPromise = callTool(server, 'terminal_wait_for_exit', { terminalId }, { progressToken: token });
    openGate(gate);
    const wait = await waitPromise;
    expect(structuredResult(wait)).toMatchObject({ running: false, exitCode: 0 });
    await sync(server);

    const seen = server.messagesSince(from);
    const responseIndex = seen.indexOf(wait);
    const progress = seen.filter((m) => isProgressFor(m, token));
    expect(progress.length).toBeGreaterThan(0);
    // none after the response
    expect(seen.slice(responseIndex + 1).filter((m) => m.method === 'notifications/progress')).toEqual([]);

    const out = await output(server, terminalId);
    const full = Buffer.from(out.output as string);
    expect(full.toString()).toBe('line 1\nline 2\nline 3\nline 4\nline 5\nline 6\n');
    let previous: number | undefined;
    let streamed = '';
    for (const note of progress) {
      const params = note.params as { progress: number; message: string; progressToken: unknown };
      expect(params.progressToken).toBe(token);
      expect(typeof params.message).toBe('string');
      if (previous !== undefined) {
        expect(params.progress).toBeGreaterThan(previous);
        // the message is exactly the bytes written since the previous notification
        expect(Buffer.byteLength(params.message)).toBe(params.progress - previous);
      }
      previous = params.progress;
      streamed += params.message;
    }
    // the last notification accounts for every byte; the streamed text is the tail written during the wait
    expect(previous).toBe(out.totalBytes);
    expect(full.toString().endsWith(streamed)).toBe(true);
    const first = progress[0]?.params as { progress: number; message: string };
    expect(first.progress - Buffer.byteLength(first.message)).toBe(full.length - Buffer.byteLength(streamed));
    await callTool(server, 'terminal_release', { terminalId });
  });

  test('requests run concurrently: a pending wait does not delay a ping or another tool call', async () => {
    const terminalId = await createTerminal(server, { command: 'sleep', args: ['1000'] });
    const from = server.mark();
    const waitId = `long-wait-${server.id()}`;
    const waitPromise = callTool(
      server,
      'terminal_wait_for_exit',
      { terminalId, timeoutSeconds: 60 },
      { id: waitId },
    );
    await sync(server);
    const out = await output(server, terminalId);
    expect(out.exitStatus).toBeNull();
    expect(server.messagesSince(from).filter((m) => isResponseTo(m, waitId))).toEqual([]);
    // killing the command ends the wait
    await callTool(server, 'terminal_kill', { terminalId });
    expect(structuredResult(await waitPromise)).toMatchObject({
      running: false,
      exitCode: null,
      signal: 'SIGTERM',
    });
    await callTool(server, 'terminal_release', { terminalId });
  });

  test('notifications/cancelled stops a wait: no response, no more progress, the command keeps running', async () => {
    const terminalId = await createTerminal(server, { command: 'while :; do printf x; sleep 0.05; done' });
    const cancelledId = `cancelled-wait-${server.id()}`;
    const cancelledToken = `cancelled-token-${server.id()}`;
    const from = server.mark();
    server.send({
      jsonrpc: '2.0',
      id: cancelledId,
      method: 'tools/call',
      params: modern(
        { name: 'terminal_wait_for_exit', arguments: { terminalId, timeoutSeconds: 60 } },
        { progressToken: cancelledToken },
      ),
    });
    // the wait is live: it streams progress
    await server.waitFor((m) => isProgressFor(m, cancelledToken), 'progress before cancelling', { from });
    server.sendNotification('notifications/cancelled', { requestId: cancelledId, reason: 'e2e test' });
    await sync(server); // the cancellation has been dispatched
    const afterCancel = server.mark();

    // A second, uncancelled wait of one second proves output keeps flowing meanwhile.
    const otherToken = `other-token-${server.id()}`;
    const other = await callTool(
      server,
      'terminal_wait_for_exit',
      { terminalId, timeoutSeconds: 1 },
      { progressToken: otherToken },
    );
    expect(structuredResult(other)).toMatchObject({ running: true });
    await sync(server);
    const later = server.messagesSince(afterCancel);
    expect(later.filter((m) => isProgressFor(m, otherToken)).length).toBeGreaterThan(0);
    expect(later.filter((m) => isProgressFor(m, cancelledToken))).toEqual([]);
    expect(server.messagesSince(from).filter((m) => isResponseTo(m, cancelledId))).toEqual([]);

    const out = await output(server, terminalId);
    expect(out.exitStatus).toBeNull();
    await killAndRelease(server, terminalId);
    await sync(server);
    expect(server.messagesSince(from).filter((m) => isResponseTo(m, cancelledId))).toEqual([]);
  });

  test('subscriptions/listen is acknowledged, held open, and silenced by notifications/cancelled', async () => {
    const listenId = `listen-${server.id()}`;
    const from = server.mark();
    server.send({
      jsonrpc: '2.0',
      id: listenId,
      method: 'subscriptions/listen',
      params: modern({ notifications: { toolsListChanged: true } }),
    });
    const ack = await server.waitFor(
      (m) => m.method === 'notifications/subscriptions/acknowledged',
      'subscription acknowledgement',
      { from },
    );
    expect(ack).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { _meta: { [SUBSCRIPTION_ID_KEY]: listenId }, notifications: {} },
    });
    await sync(server);
    expect(server.messagesSince(from).filter((m) => isResponseTo(m, listenId))).toEqual([]);
    server.sendNotification('notifications/cancelled', { requestId: listenId });
    await sync(server);
    expect(server.messagesSince(from).filter((m) => m.id === listenId)).toEqual([]);
  });
});

describe('legacy era (2025-11-25)', () => {
  let server: WireServer;
  beforeAll(() => {
    server = WireServer.start();
  });
  afterAll(() => server.dispose());

  test.each([LEGACY_VERSION, '2025-06-18', '2024-11-05', MODERN_VERSION, '1999-12-31'])(
    'initialize asking for %s is answered with 2025-11-25',
    async (asked) => {
      const answer = await server.request('initialize', {
        protocolVersion: asked,
        capabilities: {},
        clientInfo: { name: 'termgate-e2e', version: '0.0.0' },
      });
      expect(answer.result).toMatchObject({
        protocolVersion: LEGACY_VERSION,
        capabilities: { tools: {} },
        serverInfo: { name: 'termgate', version: expect.any(String) },
        instructions: expect.any(String),
      });
      expect(answer.result?.capabilities).toEqual({ tools: {} });
      expectLegacyResult(answer);
    },
  );

  test('notifications/initialized is accepted silently and ping answers {}', async () => {
    const from = server.mark();
    server.sendNotification('notifications/initialized');
    const ping = await server.request('ping', undefined, 'legacy-ping');
    expect(ping).toEqual({ jsonrpc: '2.0', id: 'legacy-ping', result: {} });
    expect(server.messagesSince(from)).toEqual([ping]);
  });

  test('server/discover without a claim is -32601', async () => {
    expectError(await server.request('server/discover', {}), -32601);
    expectError(await server.request('server/discover'), -32601);
  });

  test('tools/list and tools/call results carry no resultType, ttlMs or cacheScope', async () => {
    for (const params of [undefined, {}]) {
      const list = await server.request('tools/list', params);
      expectLegacyResult(list);
      const tools = list.result?.tools as Array<Record<string, unknown>>;
      expect(tools.map((tool) => tool.name)).toEqual([...TOOL_NAMES]);
    }
    const create = await callTool(server, 'terminal_create', { command: 'printf legacy' }, { legacy: true });
    expectLegacyResult(create);
    const { terminalId } = structuredResult(create);
    const wait = await callTool(server, 'terminal_wait_for_exit', { terminalId }, { legacy: true });
    expectLegacyResult(wait);
    expect(structuredResult(wait)).toMatchObject({ running: false, exitCode: 0 });
    const out = await callTool(server, 'terminal_output', { terminalId }, { legacy: true });
    expectLegacyResult(out);
    expect(structuredResult(out).output).toBe('legacy');
    const failure = await callTool(
      server,
      'terminal_output',
      { terminalId: 'no-such-terminal' },
      { legacy: true },
    );
    expectLegacyResult(failure);
    expect(toolErrorText(failure).length).toBeGreaterThan(0);
    expectError(await callTool(server, 'terminal_teleport', {}, { legacy: true }), -32602);
    await callTool(server, 'terminal_release', { terminalId }, { legacy: true });
  });

  test('a progressToken alone is not a modern claim', async () => {
    const answer = await server.request('tools/list', { _meta: { progressToken: 'p' } });
    expectLegacyResult(answer);
  });
});

describe('era probing', () => {
  let server: WireServer;
  beforeAll(() => {
    server = WireServer.start();
  });
  afterAll(() => server.dispose());

  test('a server/discover probe does not prevent a later initialize on the same process', async () => {
    const discover = await server.request('server/discover', modern());
    expectModernResult(discover);
    const init = await server.request('initialize', {
      protocolVersion: LEGACY_VERSION,
      capabilities: {},
      clientInfo: { name: 'termgate-e2e', version: '0.0.0' },
    });
    expect(init.result).toMatchObject({ protocolVersion: LEGACY_VERSION, serverInfo: { name: 'termgate' } });
    server.sendNotification('notifications/initialized');
    const list = await server.request('tools/list');
    expectLegacyResult(list);
    // and modern requests are still served per request afterwards
    expectModernResult(await server.request('tools/list', modern()));
  });
});

describe('shutdown', () => {
  test('on stdin EOF an open subscriptions/listen is answered, a cancelled one is not, and the exit code is 0', async () => {
    const server = WireServer.start();
    try {
      const from = server.mark();
      for (const id of ['listen-open', 'listen-cancelled']) {
        server.send({
          jsonrpc: '2.0',
          id,
          method: 'subscriptions/listen',
          params: modern({ notifications: {} }),
        });
        await server.waitFor(
          (m) =>
            m.method === 'notifications/subscriptions/acknowledged' &&
            (m.params?._meta as Record<string, unknown> | undefined)?.[SUBSCRIPTION_ID_KEY] === id,
          `ack for ${id}`,
          { from },
        );
      }
      server.sendNotification('notifications/cancelled', { requestId: 'listen-cancelled' });
      await sync(server);
      const exit = await server.closeStdin();
      expect(exit).toEqual({ code: 0, signal: null });
      const closing = server.messagesSince(from).filter((m) => isResponseTo(m, 'listen-open'));
      expect(closing).toHaveLength(1);
      expect(closing[0]).toMatchObject({
        jsonrpc: '2.0',
        id: 'listen-open',
        result: {
          resultType: 'complete',
          _meta: {
            [SUBSCRIPTION_ID_KEY]: 'listen-open',
            [SERVER_INFO_KEY]: { name: 'termgate', version: expect.any(String) },
          },
        },
      });
      expect(server.messagesSince(from).filter((m) => m.id === 'listen-cancelled')).toEqual([]);
      expect(server.nonJsonLines).toEqual([]);
    } finally {
      await server.dispose();
    }
  });

  test.each(['stdin EOF', 'SIGTERM', 'SIGINT'] as const)(
    'on %s every terminal process group is killed and the server exits 0',
    async (how) => {
      const server = WireServer.start();
      const pids: number[] = [];
      try {
        // a background child in the same process group, plus the shell itself
        const terminalId = await createTerminal(server, { command: 'sleep 1000 & echo "$! $$"; wait' });
        const out = await outputUntil(server, terminalId, (o) => /^\d+ \d+\n/.test(o.output as string));
        pids.push(...(out.output as string).trim().split(' ').map(Number));
        const long = await createTerminal(server, { command: 'sleep', args: ['1000'] });
        expect(
          structuredResult(await callTool(server, 'terminal_output', { terminalId: long })).exitStatus,
        ).toBeNull();
        for (const pid of pids) expect(isAlive(pid)).toBe(true);

        if (how === 'stdin EOF') server.child.stdin.end();
        else server.child.kill(how);
        for (const pid of pids) expect(await waitUntilGone(pid)).toBe(true);
        expect(await server.untilExit()).toEqual({ code: 0, signal: null });
        expect(server.nonJsonLines).toEqual([]);
      } finally {
        await server.dispose();
        for (const pid of pids) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // already gone
          }
        }
      }
    },
  );
});
