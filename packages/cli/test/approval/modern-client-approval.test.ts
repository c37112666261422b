/**
 * `ask` over MCP 2026-07-28 with the real v2 client pinned to that revision:
 * the server answers `input_required`, the client's elicitation handler
 * answers, the client retries, and only then does the command run (or not).
 */
import { execFileSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { auditField, readAuditRecords } from '@termgate/audit';
import { assertServerBuilt, MODERN_VERSION, SERVER_BIN } from '../e2e/support/wire-server.js';
import { ApprovalWorkspace, ASK_RULE, resultText, touchArgs } from './support/approval-fixture.js';

type Answer = { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, string> };

async function connect(
  workspace: ApprovalWorkspace,
  name: string,
  handler?: (params: Record<string, unknown>) => Answer,
): Promise<Client> {
  const client = new Client(
    { name, version: '0.0.0' },
    {
      ...(handler && { capabilities: { elicitation: { form: {} } } }),
      versionNegotiation: { mode: { pin: MODERN_VERSION } },
    },
  );
  if (handler) {
    client.setRequestHandler('elicitation/create', async (request) =>
      handler(request.params as unknown as Record<string, unknown>),
    );
  }
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [SERVER_BIN, ...workspace.serveArgs()],
      stderr: 'pipe',
    }),
  );
  return client;
}

describe('ask over MCP 2026-07-28 (v2 client, pinned), input_required', () => {
  let workspace: ApprovalWorkspace;
  let client: Client;
  let next: Answer = { action: 'cancel' };
  const asked: Record<string, unknown>[] = [];

  beforeAll(async () => {
    assertServerBuilt();
    workspace = new ApprovalWorkspace();
    client = await connect(workspace, 'approving-client', (params) => {
      asked.push(params);
      return next;
    });
    expect(client.getProtocolEra()).toBe('modern');
  });

  afterAll(async () => {
    await client?.close();
    workspace?.dispose();
  });

  const create = (marker: string) =>
    client.callTool(
      { name: 'terminal_create', arguments: touchArgs(marker, workspace.dir) },
      { timeout: 20_000 },
    );

  test('allow once: the person sees the exact line, the command runs, ask → answer → spawn naming it', async () => {
    next = { action: 'accept', content: { decision: 'allow_once' } };
    const marker = workspace.marker();
    const before = asked.length;
    const result = await create(marker);
    expect(result.isError ?? false).toBe(false);
    expect(result.structuredContent).toMatchObject({ exitCode: 0 });
    expect(workspace.ran(marker)).toBe(true);
    expect(asked.length).toBe(before + 1);
    const question = asked.at(-1)!;
    expect(question.mode).toBe('form');
    expect(question.message).toContain(`Command: touch ${marker}`);
    expect(question.message).toContain(`Directory: ${workspace.dir}`);
    // Names the rule as a rule: "Asked by: <rule id>" read as if a rule were a person.
    expect(question.message).toContain(`Policy rule: ${ASK_RULE}`);
    expect(question.message).not.toContain('Asked by');
    expect(question.message).toContain('it writes files');
    expect(workspace.steps(marker)).toEqual([
      'terminal-create:ask',
      'terminal-answer:ask:pending',
      'terminal-create:ask',
      'terminal-answer:allow:allow_once',
      'terminal-spawn',
    ]);
    const [firstAsk, , secondAsk, answer, spawn] = workspace.trail(marker);
    expect(auditField(answer!, 'termgate.approval.channel')).toBe('mcp-input-required');
    expect(auditField(answer!, 'termgate.approval.answered_by')).toBe('approving-client');
    expect(auditField(answer!, 'termgate.approval.answers')).toBe(
      auditField(firstAsk!, 'termgate.approval.id'),
    );
    expect(auditField(spawn!, 'termgate.approval.id')).toBe(auditField(secondAsk!, 'termgate.approval.id'));
    expect(auditField(answer!, 'termgate.approval.id')).toBe(auditField(secondAsk!, 'termgate.approval.id'));
  });

  test('decline: nothing runs, the refusal says a person declined, the trail records a person’s deny', async () => {
    next = { action: 'decline' };
    const marker = workspace.marker();
    const result = await create(marker);
    expect(result.isError).toBe(true);
    expect(resultText(result)).toMatch(
      /^Not run: declined by a person \(approving-client via mcp-input-required\)/,
    );
    expect(resultText(result)).toContain('do not retry it unless the user asks you to');
    expect(workspace.ran(marker)).toBe(false);
    expect(workspace.steps(marker)).toEqual([
      'terminal-create:ask',
      'terminal-answer:ask:pending',
      'terminal-create:ask',
      'terminal-answer:deny:deny',
    ]);
  });

  test('cancel: nothing runs, recorded as cancelled (not a person’s deny)', async () => {
    next = { action: 'cancel' };
    const marker = workspace.marker();
    const result = await create(marker);
    expect(result.isError).toBe(true);
    expect(resultText(result)).toMatch(/^Not run: the approval question was cancelled/);
    expect(workspace.ran(marker)).toBe(false);
    expect(workspace.steps(marker).at(-1)).toBe('terminal-answer:deny:cancelled');
  });

  test('accept with "deny" chosen in the form is a person’s deny', async () => {
    next = { action: 'accept', content: { decision: 'deny' } };
    const marker = workspace.marker();
    const result = await create(marker);
    expect(result.isError).toBe(true);
    expect(workspace.ran(marker)).toBe(false);
    expect(workspace.steps(marker).at(-1)).toBe('terminal-answer:deny:deny');
  });

  test('allow always: the same exact call runs again without asking; another line is asked again', async () => {
    next = { action: 'accept', content: { decision: 'allow_always' } };
    const marker = workspace.marker();
    const before = asked.length;
    expect((await create(marker)).isError ?? false).toBe(false);
    expect(asked.length).toBe(before + 1);
    next = { action: 'decline' };
    const again = await create(marker);
    expect(again.isError ?? false).toBe(false);
    expect(asked.length).toBe(before + 1);
    const records = workspace.trail(marker);
    const reused = records.at(-2)!;
    expect(auditField(reused, 'termgate.decision')).toBe('allow');
    expect(auditField(reused, 'termgate.approval.reused')).toBe(true);
    expect(auditField(reused, 'termgate.approval.id')).toBe(auditField(records[2]!, 'termgate.approval.id'));
    expect(auditField(records.at(-1)!, 'event.action')).toBe('terminal-spawn');
    // A different line (another marker) is not covered.
    const other = workspace.marker();
    expect((await create(other)).isError).toBe(true);
    expect(workspace.ran(other)).toBe(false);
    expect(asked.length).toBe(before + 2);
  });

  test('audit show --decision ask lists the asks; an answer row names its outcome', () => {
    const show = (...args: string[]) =>
      execFileSync(process.execPath, [SERVER_BIN, 'audit', 'show', workspace.audit, ...args], {
        encoding: 'utf8',
      });
    const asks = show('--decision', 'ask').trim().split('\n').slice(1);
    expect(asks.length).toBeGreaterThan(0);
    for (const row of asks)
      expect(row).toMatch(/ (terminal-create {2}ask|terminal-answer {2}ask \(pending\)) /);
    const denies = show('--decision', 'deny');
    expect(denies).toMatch(/terminal-answer {2}deny \(deny\)/);
    expect(denies).toMatch(/terminal-answer {2}deny \(cancelled\)/);
  });

  test('audit show --decision ask and --summary count a 2026-07-28 round trip once, as the retry', () => {
    const show = (...args: string[]) =>
      execFileSync(process.execPath, [SERVER_BIN, 'audit', 'show', workspace.audit, ...args], {
        encoding: 'utf8',
      });
    // Each question a person answered is one round trip: an answer naming the call that asked.
    const records = [...readAuditRecords(workspace.audit)].flatMap((e) => ('record' in e ? [e.record] : []));
    const roundTrips = records.filter((r) => typeof auditField(r, 'termgate.approval.answers') === 'string');
    const asksWritten = records.filter(
      (r) =>
        auditField(r, 'event.action') === 'terminal-create' && auditField(r, 'termgate.decision') === 'ask',
    );
    expect(roundTrips.length).toBeGreaterThan(1);
    // Before, every round trip was two asked creates (and a pending answer) in both views.
    expect(asksWritten.length).toBe(2 * roundTrips.length);
    const rows = show('--decision', 'ask').trim().split('\n').slice(1);
    expect(rows).toHaveLength(roundTrips.length);
    for (const row of rows) expect(row).toMatch(/ terminal-create {2}ask /);
    const summary = show('--summary');
    expect(summary).toMatch(new RegExp(`^by decision:\n(  .*\n)*? +${roundTrips.length}  ask$`, 'm'));
  });

  test('a command the policy allows is never asked about', async () => {
    const before = asked.length;
    const result = await client.callTool({
      name: 'terminal_create',
      arguments: { command: 'true', waitSeconds: 10 },
    });
    expect(result.isError ?? false).toBe(false);
    expect(asked.length).toBe(before);
  });
});

describe('ask over MCP 2026-07-28 without the elicitation capability', () => {
  test('refused: approval was needed and could not be asked for; nothing runs', async () => {
    assertServerBuilt();
    const workspace = new ApprovalWorkspace();
    const client = await connect(workspace, 'no-elicitation');
    try {
      const marker = workspace.marker();
      const result = await client.callTool({
        name: 'terminal_create',
        arguments: touchArgs(marker, workspace.dir),
      });
      expect(result.isError).toBe(true);
      expect(resultText(result)).toMatch(
        /^Not run: approval needed but could not be asked for: this client offers no way to ask a person; nothing was run/,
      );
      expect(resultText(result)).toContain('This client cannot ask the user for approval');
      expect(workspace.ran(marker)).toBe(false);
      expect(workspace.steps(marker)).toEqual(['terminal-create:ask', 'terminal-answer:deny:unavailable']);
    } finally {
      await client.close();
      workspace.dispose();
    }
  });
});
