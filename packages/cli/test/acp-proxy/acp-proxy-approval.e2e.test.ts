/**
 * `ask` through `termgate acp-proxy`, end to end: a real agent (the SDK's
 * agent app) creates terminals, the policy asks, and termgate itself sends
 * `session/request_permission` to a real editor (the SDK's client app),
 * which answers with each option, with cancelled, by cancelling the prompt
 * turn, or not at all.
 */
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { auditField } from '@termgate/audit';
import { ApprovalWorkspace } from '../approval/support/approval-fixture.js';
import { assertServerBuilt } from '../e2e/support/wire-server.js';

const run = promisify(execFile);
const FIXTURES = path.join(import.meta.dirname, 'fixtures');
const BIN = path.resolve(import.meta.dirname, '../../dist/bin.js');
const AGENT = path.join(FIXTURES, 'agent.mjs');
const EDITOR = path.join(FIXTURES, 'approval-editor.mjs');

// biome-ignore lint/suspicious/noExplicitAny: JSON read back from the editor fixture; the assertions check its shape.
type Json = Record<string, any>;

let workspace: ApprovalWorkspace;

beforeAll(() => {
  assertServerBuilt();
  workspace = new ApprovalWorkspace();
});

afterAll(() => workspace?.dispose());

async function editor(mode: string, prompts: string[], extra: string[] = []): Promise<Json> {
  const { stdout } = await run(
    process.execPath,
    [
      EDITOR,
      mode,
      JSON.stringify(prompts),
      '--',
      process.execPath,
      BIN,
      'acp-proxy',
      '--policy',
      workspace.policy,
      '--audit',
      workspace.audit,
      ...extra,
      '--',
      process.execPath,
      AGENT,
    ],
    { timeout: 30_000 },
  );
  const result = JSON.parse(stdout) as Json;
  if (result.error) throw new Error(`editor failed: ${JSON.stringify(result.error)}\n${result.proxyStderr}`);
  return result;
}

describe('acp-proxy: ask asks the editor', () => {
  test('allow once: the editor is shown the exact judged line as a new execute tool call; it runs', async () => {
    const marker = workspace.marker();
    const result = await editor('allow_once', [`exec touch ${marker}`]);
    expect(result.reports).toEqual([{ created: true, exit: { exitCode: 0, signal: null } }]);
    expect(await workspace.ranWithin(marker)).toBe(true);
    const [request] = result.permissionRequests;
    expect(request.toolCall).toMatchObject({ title: `touch ${marker}`, kind: 'execute' });
    expect(request.toolCall.content[0].content.text).toContain(`Command: touch ${marker}`);
    expect(request.options.map((o: Json) => o.kind)).toEqual(['allow_once', 'allow_always', 'reject_once']);
    // The new tool call was announced before the question and closed after it.
    const own = result.updates.filter((u: Json) => u.update.toolCallId === request.toolCall.toolCallId);
    expect(own.map((u: Json) => [u.update.sessionUpdate, u.update.status])).toEqual([
      ['tool_call', 'pending'],
      ['tool_call_update', 'completed'],
    ]);
    expect(workspace.steps(marker)).toEqual([
      'terminal-create:ask',
      'terminal-answer:allow:allow_once',
      'terminal-spawn',
    ]);
    const [ask, answer, spawn] = workspace.trail(marker);
    expect(auditField(answer!, 'termgate.approval.channel')).toBe('acp-permission');
    expect(auditField(answer!, 'termgate.approval.answered_by')).toBe('fixture-editor');
    expect(auditField(spawn!, 'termgate.approval.id')).toBe(auditField(ask!, 'termgate.approval.id'));
  });

  test('the agent’s open execute tool call is named in the question’s text, never as its tool call', async () => {
    const marker = workspace.marker();
    const result = await editor('allow_once', [`exec-in-tool-call touch ${marker}`]);
    const { toolCall } = result.permissionRequests[0];
    expect(toolCall).toMatchObject({ title: `touch ${marker}`, kind: 'execute' });
    expect(toolCall.toolCallId).toMatch(/^termgate-approval-/);
    expect(toolCall.content[0].content.text).toContain('The agent\'s tool call: "call-exec"');
    expect(await workspace.ranWithin(marker)).toBe(true);
  });

  test('reject: nothing runs; the agent is told a person declined; recorded as a person’s deny', async () => {
    const marker = workspace.marker();
    const result = await editor('reject_once', [`exec touch ${marker}`]);
    expect(result.reports[0].created).toBe(false);
    expect(result.reports[0].error.message).toMatch(
      /^Not run: declined by a person \(fixture-editor via acp-permission\)/,
    );
    expect(result.reports[0].error.data).toMatchObject({ approval: 'deny' });
    expect(workspace.ran(marker)).toBe(false);
    expect(workspace.steps(marker)).toEqual(['terminal-create:ask', 'terminal-answer:deny:deny']);
  });

  test('allow always: the exact line runs again in the session without asking; another line is asked', async () => {
    const marker = workspace.marker();
    const other = workspace.marker();
    const result = await editor('allow_always', [
      `exec touch ${marker}`,
      `exec touch ${marker}`,
      `exec touch ${other}`,
    ]);
    expect(result.reports.map((r: Json) => r.created)).toEqual([true, true, true]);
    expect(result.permissionRequests.map((r: Json) => r.toolCall.title)).toEqual([
      `touch ${marker}`,
      `touch ${other}`,
    ]);
    expect(workspace.steps(marker)).toEqual([
      'terminal-create:ask',
      'terminal-answer:allow:allow_always',
      'terminal-spawn',
      'terminal-create:allow',
      'terminal-spawn',
    ]);
  });

  test.each([
    ['cancelled', /^Not run: the approval question was cancelled/, 'cancelled'],
    [
      'session-cancel',
      /^Not run: the approval question was cancelled before anyone approved it: the prompt turn was cancelled/,
      'cancelled',
    ],
  ])('%s: nothing runs, recorded as cancelled', async (mode, text, outcome) => {
    const marker = workspace.marker();
    const result = await editor(mode, [`exec touch ${marker}`]);
    expect(result.reports[0].created).toBe(false);
    expect(result.reports[0].error.message).toMatch(text);
    expect(workspace.ran(marker)).toBe(false);
    expect(workspace.steps(marker)).toEqual(['terminal-create:ask', `terminal-answer:deny:${outcome}`]);
  });

  test('no answer within --approval-timeout: a denial, recorded as timeout', async () => {
    const marker = workspace.marker();
    const result = await editor('silent', [`exec touch ${marker}`], ['--approval-timeout', '1']);
    expect(result.reports[0].error.message).toMatch(
      /^Not run: nobody answered the approval question in time/,
    );
    expect(workspace.ran(marker)).toBe(false);
    expect(workspace.steps(marker)).toEqual(['terminal-create:ask', 'terminal-answer:deny:timeout']);
  });
});
