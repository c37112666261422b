/**
 * `ask` over MCP 2025-11-25: the server sends `elicitation/create` while the
 * `tools/call` is pending. Real clients: the v2 client in its legacy mode and
 * the v1 SDK client, each with an elicitation handler and without the
 * capability; a question nobody answers in time, and a cancelled call.
 */
import { Client as V2Client } from '@modelcontextprotocol/client';
import { StdioClientTransport as V2Transport } from '@modelcontextprotocol/client/stdio';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { auditField } from '@termgate/audit';
import { assertServerBuilt, pause, SERVER_BIN } from '../e2e/support/wire-server.js';
import { ApprovalWorkspace, resultText, touchArgs } from './support/approval-fixture.js';

type Answer = { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, string> };
type Handler = (params: Record<string, unknown>, signal: AbortSignal) => Promise<Answer>;

interface Connected {
  callTool(
    args: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<{ content?: unknown; isError?: boolean | undefined }>;
  close(): Promise<void>;
}

const CLIENTS: Record<
  string,
  (workspace: ApprovalWorkspace, handler?: Handler, extra?: string[]) => Promise<Connected>
> = {
  'v2 client, legacy mode': async (workspace, handler, extra = []) => {
    const client = new V2Client(
      { name: 'v2-legacy', version: '0.0.0' },
      handler ? { capabilities: { elicitation: { form: {} } } } : {},
    );
    if (handler) {
      client.setRequestHandler('elicitation/create', (request, ctx) =>
        handler(request.params as unknown as Record<string, unknown>, ctx.mcpReq.signal),
      );
    }
    await client.connect(
      new V2Transport({
        command: process.execPath,
        args: [SERVER_BIN, ...workspace.serveArgs(), ...extra],
        stderr: 'pipe',
      }),
    );
    expect(client.getProtocolEra()).toBe('legacy');
    return {
      callTool: (args, signal) =>
        client.callTool(
          { name: 'terminal_create', arguments: args },
          { timeout: 30_000, ...(signal && { signal }) },
        ),
      close: () => client.close(),
    };
  },
  'v1 SDK client': async (workspace, handler, extra = []) => {
    const client = new V1Client(
      { name: 'v1-client', version: '0.0.0' },
      handler ? { capabilities: { elicitation: {} } } : {},
    );
    if (handler) {
      client.setRequestHandler(ElicitRequestSchema, (request, extraInfo) =>
        handler(request.params as unknown as Record<string, unknown>, extraInfo.signal),
      );
    }
    await client.connect(
      new V1Transport({
        command: process.execPath,
        args: [SERVER_BIN, ...workspace.serveArgs(), ...extra],
        stderr: 'pipe',
      }),
    );
    return {
      callTool: async (args, signal) =>
        (await client.callTool({ name: 'terminal_create', arguments: args }, undefined, {
          timeout: 30_000,
          ...(signal && { signal }),
        })) as { content?: unknown; isError?: boolean },
      close: () => client.close(),
    };
  },
};

/** Polls the trail (never a sync point by itself: the assertion is on what it contains). */
async function untilSteps(workspace: ApprovalWorkspace, marker: string, count: number): Promise<string[]> {
  for (let i = 0; i < 200 && workspace.steps(marker).length < count; i++) await pause(50);
  return workspace.steps(marker);
}

describe.each(Object.keys(CLIENTS))('ask over MCP 2025-11-25 (%s)', (kind) => {
  const connect = CLIENTS[kind]!;
  let workspace: ApprovalWorkspace;
  let client: Connected;
  /** The next answer, or `hang`: never answer, and hand the question's signal to `onHang`. */
  let next: Answer | 'hang' = { action: 'cancel' };
  let onHang: (signal: AbortSignal) => void = () => undefined;
  const asked: Record<string, unknown>[] = [];

  beforeAll(async () => {
    assertServerBuilt();
    workspace = new ApprovalWorkspace();
    client = await connect(workspace, async (params, signal) => {
      asked.push(params);
      if (next !== 'hang') return next;
      onHang(signal);
      return new Promise<Answer>(() => undefined);
    });
  });

  afterAll(async () => {
    await client?.close();
    workspace?.dispose();
  });

  test('allow once: asked while the call is pending, then it runs; ask → answer → spawn naming it', async () => {
    next = { action: 'accept', content: { decision: 'allow_once' } };
    const marker = workspace.marker();
    const result = await client.callTool(touchArgs(marker, workspace.dir));
    expect(result.isError ?? false).toBe(false);
    expect(workspace.ran(marker)).toBe(true);
    expect(asked.at(-1)!.message).toContain(`Command: touch ${marker}`);
    expect(workspace.steps(marker)).toEqual([
      'terminal-create:ask',
      'terminal-answer:allow:allow_once',
      'terminal-spawn',
    ]);
    const [ask, answer, spawn] = workspace.trail(marker);
    const id = auditField(ask!, 'termgate.approval.id');
    expect(auditField(answer!, 'termgate.approval.id')).toBe(id);
    expect(auditField(answer!, 'termgate.approval.channel')).toBe('mcp-elicitation');
    expect(auditField(answer!, 'termgate.approval.answered_by')).toBe(
      kind === 'v1 SDK client' ? 'v1-client' : 'v2-legacy',
    );
    expect(auditField(spawn!, 'termgate.approval.id')).toBe(id);
  });

  test('decline: nothing runs; a person’s deny', async () => {
    next = { action: 'decline' };
    const marker = workspace.marker();
    const result = await client.callTool(touchArgs(marker, workspace.dir));
    expect(result.isError).toBe(true);
    expect(resultText(result)).toMatch(/^Not run: declined by a person/);
    expect(workspace.ran(marker)).toBe(false);
    expect(workspace.steps(marker)).toEqual(['terminal-create:ask', 'terminal-answer:deny:deny']);
  });

  test('allow always: the exact line runs again unasked', async () => {
    next = { action: 'accept', content: { decision: 'allow_always' } };
    const marker = workspace.marker();
    expect((await client.callTool(touchArgs(marker, workspace.dir))).isError ?? false).toBe(false);
    const count = asked.length;
    next = { action: 'decline' };
    expect((await client.callTool(touchArgs(marker, workspace.dir))).isError ?? false).toBe(false);
    expect(asked.length).toBe(count);
  });

  test('cancelling the call cancels the question; nothing runs, recorded as cancelled', async () => {
    const marker = workspace.marker();
    const controller = new AbortController();
    let questionSignal: AbortSignal | undefined;
    next = 'hang';
    const waiting = new Promise<void>((resolve) => {
      onHang = (signal) => {
        questionSignal = signal;
        resolve();
      };
    });
    const call = client
      .callTool(touchArgs(marker, workspace.dir), controller.signal)
      .catch((error: unknown) => error);
    await waiting;
    controller.abort('the user stopped it');
    await call;
    expect(await untilSteps(workspace, marker, 2)).toEqual([
      'terminal-create:ask',
      'terminal-answer:deny:cancelled',
    ]);
    // The server cancelled its question: the client's handler saw its signal abort.
    for (let i = 0; i < 100 && !questionSignal?.aborted; i++) await pause(50);
    expect(questionSignal?.aborted).toBe(true);
    expect(workspace.ran(marker)).toBe(false);
  });
});

describe.each(Object.keys(CLIENTS))('ask over MCP 2025-11-25 without the capability (%s)', (kind) => {
  test('refused: approval needed and could not be asked for; nothing runs', async () => {
    assertServerBuilt();
    const workspace = new ApprovalWorkspace();
    const client = await CLIENTS[kind]!(workspace);
    try {
      const marker = workspace.marker();
      const result = await client.callTool(touchArgs(marker, workspace.dir));
      expect(result.isError).toBe(true);
      expect(resultText(result)).toMatch(/^Not run: approval needed but could not be asked for/);
      expect(workspace.ran(marker)).toBe(false);
      expect(workspace.steps(marker)).toEqual(['terminal-create:ask', 'terminal-answer:deny:unavailable']);
    } finally {
      await client.close();
      workspace.dispose();
    }
  });
});

describe('ask over MCP 2025-11-25: nobody answers within --approval-timeout', () => {
  test('a timeout is a denial, recorded as timeout; nothing runs', async () => {
    assertServerBuilt();
    const workspace = new ApprovalWorkspace();
    const client = await CLIENTS['v1 SDK client']!(workspace, () => new Promise<Answer>(() => undefined), [
      '--approval-timeout',
      '1',
    ]);
    try {
      const marker = workspace.marker();
      const result = await client.callTool(touchArgs(marker, workspace.dir));
      expect(result.isError).toBe(true);
      expect(resultText(result)).toMatch(
        /^Not run: nobody answered the approval question in time: no answer within 1000 ms/,
      );
      expect(workspace.ran(marker)).toBe(false);
      expect(workspace.steps(marker)).toEqual(['terminal-create:ask', 'terminal-answer:deny:timeout']);
    } finally {
      await client.close();
      workspace.dispose();
    }
  });
});
