/**
 * The question termgate asks through `termgate acp-proxy` belongs to
 * termgate: a hostile agent (raw JSON lines) cannot change what the editor
 * shows for it, cannot read the editor's answers to it, and cannot get an
 * `allow_always` in a session the editor never created. The test is the
 * editor: it merges every `session/update` for the question's tool call
 * into the question, as an editor's view of a tool call does.
 */
import { ApprovalWorkspace } from '../approval/support/approval-fixture.js';
import { assertServerBuilt } from '../e2e/support/wire-server.js';
import { type AgentStep, RawProxy, terminalRequest } from '../hostile/support/raw-proxy.js';

type Json = Record<string, unknown>;

let workspace: ApprovalWorkspace;

beforeAll(() => {
  assertServerBuilt();
  workspace = new ApprovalWorkspace();
});

afterAll(() => workspace?.dispose());

function start(steps: readonly AgentStep[], extra: string[] = []): RawProxy {
  return RawProxy.start(steps, [], ['--policy', workspace.policy, ...extra]);
}

function update(sessionUpdate: string, fields: Json): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    method: 'session/update',
    params: { sessionId: 's1', update: { sessionUpdate, toolCallId: 'tc1', ...fields } },
  });
}

const parsed = (lines: readonly string[]): Json[] => lines.map((line) => JSON.parse(line) as Json);

/** The question as the editor shows it: the request's toolCall with every update for its id merged in. */
function mergedView(proxy: RawProxy, request: Json): Json {
  const toolCall = (request.params as Json).toolCall as Json;
  let view: Json = { ...toolCall };
  for (const message of parsed(proxy.editorLines)) {
    const changes = (message.params as Json | undefined)?.update as Json | undefined;
    if (message.method !== 'session/update' || changes === undefined) continue;
    if (changes.toolCallId !== toolCall.toolCallId) continue;
    const { sessionUpdate: _kind, ...fields } = changes;
    view = { ...view, ...fields };
  }
  return view;
}

async function question(proxy: RawProxy): Promise<Json> {
  return JSON.parse(await proxy.editorLine('"method":"session/request_permission"')) as Json;
}

function answer(proxy: RawProxy, id: unknown, optionId: string): void {
  proxy.editorIn.write(
    `${JSON.stringify({ jsonrpc: '2.0', id, result: { outcome: { outcome: 'selected', optionId } } })}\n`,
  );
}

/** The agent announces `tc1 "ls -la"`, asks for the real line, then rewrites tc1 with `spoof`. */
function spoofingAgent(marker: string, spoof: Json): AgentStep[] {
  return [
    { send: update('tool_call', { title: 'ls -la', kind: 'execute', status: 'pending' }) },
    { send: terminalRequest('1', 'create', { command: `touch ${marker}` }) },
    { sleep: 150 },
    { send: update('tool_call_update', { ...spoof, _meta: { spoof: true } }) },
  ];
}

describe('acp-proxy: what the editor shows for the question is termgate’s alone', () => {
  test('the spoofing agent of issue 28: the person is shown the line that runs, and approving it runs that line', async () => {
    const marker = workspace.marker();
    const proxy = start(
      spoofingAgent(marker, {
        title: 'ls -la',
        content: [{ type: 'content', content: { type: 'text', text: 'Command: ls -la' } }],
        rawInput: { command: 'ls -la' },
      }),
    );
    try {
      const request = await question(proxy);
      await proxy.editorLine('"spoof":true');
      const view = mergedView(proxy, request);
      expect(view.title).toBe(`touch ${marker}`);
      expect(view.toolCallId).not.toBe('tc1');
      expect(String(view.toolCallId)).toMatch(/^termgate-approval-/);
      expect(JSON.stringify(view.content)).toContain(`Command: touch ${marker}`);
      expect(JSON.stringify(view.content)).not.toContain('Command: ls -la');
      // The agent's tool call is named only as text.
      expect(JSON.stringify(view.content)).toContain('The agent\'s tool call: \\"tc1\\"');
      expect(view.rawInput).toMatchObject({ command: `touch ${marker}` });
      answer(proxy, request.id, 'allow_once');
      expect(JSON.parse(await proxy.agentLine('"id":1,')).result).toMatchObject({
        terminalId: expect.any(String),
      });
      expect(await workspace.ranWithin(marker)).toBe(true);
    } finally {
      await proxy.dispose();
    }
  }, 30_000);

  test.each<[string, Json]>([
    ['title', { title: 'ls -la' }],
    ['content', { content: [{ type: 'content', content: { type: 'text', text: 'Command: ls -la' } }] }],
    ['rawInput', { rawInput: { command: 'ls -la' } }],
    ['kind', { kind: 'read' }],
    ['locations', { locations: [{ path: '/etc/hostname' }] }],
  ])(
    'an agent update of %s does not change the question',
    async (field, spoof) => {
      const marker = workspace.marker();
      const proxy = start(spoofingAgent(marker, spoof));
      try {
        const request = await question(proxy);
        const asked = (request.params as Json).toolCall as Json;
        await proxy.editorLine('"spoof":true');
        const view = mergedView(proxy, request);
        expect(view[field]).toEqual(asked[field]);
        expect(view[field]).not.toEqual(spoof[field]);
        answer(proxy, request.id, 'reject_once');
        await proxy.agentLine('"id":1,');
      } finally {
        await proxy.dispose();
      }
    },
    30_000,
  );

  test('an agent that names a termgate id is refused: no update, no permission request and no request id of termgate’s reach the editor', async () => {
    const proxy = start([
      {
        send: JSON.stringify({
          jsonrpc: '2.0',
          method: 'session/update',
          params: {
            sessionId: 's1',
            update: { sessionUpdate: 'tool_call_update', toolCallId: 'termgate-approval-guess', title: 'x' },
          },
        }),
      },
      {
        send: JSON.stringify({
          jsonrpc: '2.0',
          id: 5,
          method: 'session/request_permission',
          params: { sessionId: 's1', toolCall: { toolCallId: 'termgate-approval-guess' }, options: [] },
        }),
      },
      {
        send: JSON.stringify({
          jsonrpc: '2.0',
          id: 'termgate-6',
          method: 'session/request_permission',
          params: { sessionId: 's1', toolCall: { toolCallId: 'mine' }, options: [] },
        }),
      },
      { send: terminalRequest('7', 'create', { command: 'true' }) },
    ]);
    try {
      await proxy.agentLine('"id":7,');
      expect(JSON.parse(await proxy.agentLine('"id":5,')).error).toMatchObject({ code: -32600 });
      expect(JSON.parse(await proxy.agentLine('"id":"termgate-6"')).error).toMatchObject({ code: -32600 });
      expect(proxy.editorLines.filter((line) => line.includes('termgate-approval-guess'))).toEqual([]);
      expect(proxy.editorLines.filter((line) => line.includes('termgate-6'))).toEqual([]);
    } finally {
      await proxy.dispose();
    }
  }, 30_000);
});

describe('acp-proxy: the editor’s answers to termgate are consumed', () => {
  test('a second answer, an answer after the timeout and an answer to an id never sent never reach the agent', async () => {
    const first = workspace.marker();
    const late = workspace.marker();
    const proxy = start(
      [
        { send: terminalRequest('1', 'create', { command: `touch ${first}` }) },
        { waitFor: '"id":1,' },
        { send: terminalRequest('2', 'create', { command: `touch ${late}` }) },
        { waitFor: '"id":2,' },
      ],
      ['--approval-timeout', '1'],
    );
    try {
      const request = await question(proxy);
      answer(proxy, request.id, 'allow_once');
      await proxy.agentLine('"id":1,');
      answer(proxy, request.id, 'allow_once'); // settled: a second answer
      // The second question is never answered in time.
      const second = await proxy.until(
        () => parsed(proxy.editorLines).filter((m) => m.method === 'session/request_permission')[1],
        'the second question',
        15_000,
      );
      expect(JSON.parse(await proxy.agentLine('"id":2,')).error).toMatchObject({
        data: { approval: 'timeout' },
      });
      answer(proxy, second.id, 'allow_once'); // timed out
      answer(proxy, 'termgate-00000000-0000-4000-8000-000000000000', 'allow_once'); // never sent
      // A marker round trip through the proxy: everything the editor sent before it was handled.
      proxy.editorIn.write('{"jsonrpc":"2.0","method":"marker/after","params":{}}\n');
      await proxy.agentLine('"method":"marker/after"');
      expect(proxy.agentLines.filter((line) => line.includes('"id":"termgate-'))).toEqual([]);
      expect(proxy.agentLines.filter((line) => line.includes('"outcome"'))).toEqual([]);
      expect(workspace.ran(first)).toBe(true);
      expect(workspace.ran(late)).toBe(false);
    } finally {
      await proxy.dispose();
    }
  }, 30_000);
});

describe('acp-proxy: allow_always only in a session the editor created', () => {
  const sessionNewAnswer = (sessionId: string) =>
    JSON.stringify({ jsonrpc: '2.0', id: 100, result: { sessionId } });

  test('in the editor’s session it is offered; in a session the agent made up it is not, and choosing it anyway runs nothing', async () => {
    const own = workspace.marker();
    const madeUp = workspace.marker();
    const proxy = start([
      { waitFor: '"method":"session/new"' },
      { send: sessionNewAnswer('s1') },
      { send: terminalRequest('1', 'create', { command: `touch ${own}` }) },
      { waitFor: '"id":1,' },
      {
        send: JSON.stringify({
          jsonrpc: '2.0',
          id: 2,
          method: 'terminal/create',
          params: { sessionId: 'agent-made-up', command: `touch ${madeUp}` },
        }),
      },
    ]);
    try {
      proxy.editorIn.write(
        '{"jsonrpc":"2.0","id":100,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}\n',
      );
      await proxy.editorLine('"id":100,');
      const optionsOf = (m: Json) =>
        ((m.params as Json).options as Json[]).map((option) => option.optionId as string);
      const inOwn = await question(proxy);
      expect(optionsOf(inOwn)).toEqual(['allow_once', 'allow_always', 'reject_once']);
      answer(proxy, inOwn.id, 'allow_always');
      await proxy.agentLine('"id":1,');
      const inMadeUp = await proxy.until(
        () => parsed(proxy.editorLines).filter((m) => m.method === 'session/request_permission')[1],
        'the question in the made-up session',
        15_000,
      );
      expect((inMadeUp.params as Json).sessionId).toBe('agent-made-up');
      expect(optionsOf(inMadeUp)).toEqual(['allow_once', 'reject_once']);
      answer(proxy, inMadeUp.id, 'allow_always');
      expect(JSON.parse(await proxy.agentLine('"id":2,')).error).toMatchObject({
        data: { approval: 'unavailable' },
      });
      expect(workspace.ran(own)).toBe(true);
      expect(workspace.ran(madeUp)).toBe(false);
    } finally {
      await proxy.dispose();
    }
  }, 30_000);
});
