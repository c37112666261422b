/**
 * `termgate serve --http` driven by real clients over Streamable HTTP: the
 * v2 client (`@modelcontextprotocol/client` 2.4.0), which negotiates
 * 2026-07-28 through `server/discover`, and the v1 SDK client
 * (`@modelcontextprotocol/sdk` 1.32.2), which uses `initialize` and an
 * `Mcp-Session-Id` session. The same terminal scenarios as over stdio, a
 * long-running handle polled to its end, and `ask` in both eras: the modern
 * `input_required` round trip and the legacy `elicitation/create` sent on
 * the call's SSE stream.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { ApprovalWorkspace, resultText, touchArgs } from '../approval/support/approval-fixture.js';
import {
  expectCancelledWait,
  expectKillAndRelease,
  expectStreamedRun,
  expectToolList,
  structured,
  type ToolCaller,
  type ToolCallResult,
} from './support/client-scenarios.js';
import { HttpServer } from './support/http-server.js';
import {
  defaultPolicyArgs,
  LEGACY_VERSION,
  MODERN_VERSION,
  removeAuditFiles,
} from './support/wire-server.js';

/** A create that returns at once, then its handle polled with terminal_output until it exits. */
async function expectPolledHandle(caller: ToolCaller): Promise<void> {
  const created = structured(
    await caller.callTool('terminal_create', {
      command: 'sleep 1; echo finished',
      waitSeconds: 0,
    }),
  );
  expect(created).toMatchObject({ running: true });
  let output: Record<string, unknown> = {};
  for (let poll = 0; poll < 100; poll += 1) {
    output = structured(await caller.callTool('terminal_output', { terminalId: created.terminalId }));
    if (output.exitStatus !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(output).toMatchObject({ exitStatus: { exitCode: 0 } });
  expect(String(output.output)).toContain('finished');
  expect(structured(await caller.callTool('terminal_release', { terminalId: created.terminalId }))).toEqual(
    {},
  );
}

describe('the v2 client over Streamable HTTP (2026-07-28)', () => {
  let server: HttpServer;
  let client: Client;
  let caller: ToolCaller;

  beforeAll(async () => {
    server = await HttpServer.start(defaultPolicyArgs(false));
    client = new Client(
      { name: 'termgate-e2e-http', version: '0.0.0' },
      { versionNegotiation: { mode: 'auto', probe: { timeoutMs: 15_000 } } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    caller = {
      listTools: () => client.listTools(),
      callTool: (name, args, onprogress, signal) =>
        client.callTool(
          { name, arguments: args },
          {
            timeout: 20_000,
            ...(onprogress !== undefined && { onprogress }),
            ...(signal !== undefined && { signal }),
          },
        ),
    };
  });

  afterAll(async () => {
    await client?.close();
    await server?.stop();
    removeAuditFiles();
  });

  test('negotiates 2026-07-28 through server/discover; stdout stays empty', () => {
    expect(client.getProtocolEra()).toBe('modern');
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN_VERSION);
    expect(client.getServerVersion()).toMatchObject({ name: 'termgate' });
    expect(server.stdoutText()).toBe('');
  });

  test('lists the five terminal tools', async () => {
    await expectToolList(caller);
  });

  test('one call: echo hi runs and answers in the create', async () => {
    const result = structured(await caller.callTool('terminal_create', { command: 'echo hi' }));
    expect(result).toMatchObject({ running: false, exitCode: 0, output: 'hi\n' });
  });

  test('progress arrives on the POST’s SSE stream while the create waits', async () => {
    await expectStreamedRun(caller);
  });

  test('a long-running handle, polled until it exits', async () => {
    await expectPolledHandle(caller);
  });

  test('kill and release', async () => {
    await expectKillAndRelease(caller);
  });

  test('an aborted wait (its stream closed) rejects; the command keeps running', async () => {
    await expectCancelledWait(caller);
  });
});

describe('the v1 SDK client over Streamable HTTP (2025-11-25, Mcp-Session-Id)', () => {
  let server: HttpServer;
  let client: V1Client;
  let transport: V1HttpTransport;
  let negotiated: string | undefined;
  let caller: ToolCaller;

  beforeAll(async () => {
    server = await HttpServer.start(defaultPolicyArgs(false));
    client = new V1Client({ name: 'termgate-e2e-http-legacy', version: '0.0.0' });
    transport = new V1HttpTransport(new URL(server.url));
    const setVersion = transport.setProtocolVersion.bind(transport);
    transport.setProtocolVersion = (version: string) => {
      negotiated = version;
      setVersion(version);
    };
    await client.connect(transport);
    caller = {
      listTools: () => client.listTools(),
      callTool: async (name, args, onprogress, signal) =>
        (await client.callTool({ name, arguments: args }, undefined, {
          timeout: 20_000,
          ...(onprogress !== undefined && { onprogress }),
          ...(signal !== undefined && { signal }),
        })) as ToolCallResult,
    };
  });

  afterAll(async () => {
    await client?.close();
    await server?.stop();
    removeAuditFiles();
  });

  test('initialize negotiates 2025-11-25 and opens a session', () => {
    expect(negotiated).toBe(LEGACY_VERSION);
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
  });

  test('lists the tools, streams progress, kills and releases, cancels a wait', async () => {
    await expectToolList(caller);
    await expectStreamedRun(caller);
    await expectPolledHandle(caller);
    await expectKillAndRelease(caller);
    await expectCancelledWait(caller);
  });

  test('a request without the session id is 400, with an unknown one 404; DELETE ends the session', async () => {
    const post = (headers: Record<string, string>) =>
      fetch(server.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    expect((await post({})).status).toBe(400);
    expect((await post({ 'mcp-session-id': '00000000-0000-4000-8000-000000000000' })).status).toBe(404);
    const session = transport.sessionId as string;
    expect((await post({ 'mcp-session-id': session })).status).toBe(200);
    await transport.terminateSession();
    expect((await post({ 'mcp-session-id': session })).status).toBe(404);
  });
});

describe('ask over Streamable HTTP', () => {
  let workspace: ApprovalWorkspace;
  let server: HttpServer;

  beforeAll(async () => {
    workspace = new ApprovalWorkspace();
    server = await HttpServer.start(['--policy', workspace.policy]);
  });

  afterAll(async () => {
    await server?.stop();
    workspace?.dispose();
    removeAuditFiles();
  });

  test('2026-07-28: input_required, the person allows once, the retry runs the command', async () => {
    const asked: Record<string, unknown>[] = [];
    const client = new Client(
      { name: 'http-approver', version: '0.0.0' },
      { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: MODERN_VERSION } } },
    );
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params as unknown as Record<string, unknown>);
      return { action: 'accept', content: { decision: 'allow_once' } };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    try {
      const marker = workspace.marker();
      const result = await client.callTool(
        { name: 'terminal_create', arguments: touchArgs(marker, workspace.dir) },
        { timeout: 20_000 },
      );
      expect(result.isError ?? false).toBe(false);
      expect(workspace.ran(marker)).toBe(true);
      expect(asked).toHaveLength(1);
      expect(String(asked[0]?.message)).toContain(`Command: touch ${marker}`);
    } finally {
      await client.close();
    }
  });

  test('2026-07-28: a declined question runs nothing', async () => {
    const client = new Client(
      { name: 'http-decliner', version: '0.0.0' },
      { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: MODERN_VERSION } } },
    );
    client.setRequestHandler('elicitation/create', async () => ({ action: 'decline' }));
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    try {
      const marker = workspace.marker();
      const result = await client.callTool(
        { name: 'terminal_create', arguments: touchArgs(marker, workspace.dir) },
        { timeout: 20_000 },
      );
      expect(result.isError).toBe(true);
      expect(resultText(result)).toMatch(/^Not run: declined by a person/);
      expect(workspace.ran(marker)).toBe(false);
    } finally {
      await client.close();
    }
  });

  test('2025-11-25: elicitation/create arrives on the call’s stream; the answer POSTed back runs it', async () => {
    const client = new V1Client(
      { name: 'http-legacy-approver', version: '0.0.0' },
      { capabilities: { elicitation: {} } },
    );
    const asked: Record<string, unknown>[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params as unknown as Record<string, unknown>);
      return { action: 'accept', content: { decision: 'allow_once' } };
    });
    await client.connect(new V1HttpTransport(new URL(server.url)));
    try {
      const marker = workspace.marker();
      const result = (await client.callTool(
        { name: 'terminal_create', arguments: touchArgs(marker, workspace.dir) },
        undefined,
        { timeout: 20_000 },
      )) as ToolCallResult;
      expect(result.isError ?? false).toBe(false);
      expect(workspace.ran(marker)).toBe(true);
      expect(asked).toHaveLength(1);
    } finally {
      await client.close();
    }
  });
});
