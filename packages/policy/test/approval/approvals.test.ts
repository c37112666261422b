/**
 * The gate's approvals in process: the question a person is shown, what an
 * approver's junk or failure turns into (always `unavailable`, never an
 * allow), the refusal sentences, and which requests an `allow_always`
 * covers. policy-gate.ask.test.ts covers them through the gate.
 */
import type { ApprovalAnswer, Approver, CallerContext } from '@termgate/termhost';
import { Approvals, NO_APPROVER_CHANNEL, refusalReason } from '../../src/approvals.js';
import type { RecordedDecision } from '../../src/audit-events/events.js';
import { gateRequest, MCP_CALLER } from '../support/requests.js';

const ASKED: RecordedDecision = {
  decision: 'ask',
  ruleIds: ['ask-push'],
  reason: 'approval needed',
  resolvedCwd: '/real/project',
};

/** An approver whose `ask` returns (or throws) whatever the test says, untyped. */
function approver(ask: () => unknown): Approver {
  return { channel: 'test-channel', ask: async () => ask() as ApprovalAnswer };
}

const withApprover = (answer: () => unknown): CallerContext => ({
  ...MCP_CALLER,
  approver: approver(answer),
});

describe('Approvals.prepare: the question', () => {
  it('shows an argv request as a quoted command line, and the env names sorted', () => {
    const approvals = new Approvals(() => 0);
    const request = gateRequest('create', 'git', {
      args: ['push', 'my origin'],
      env: { ZED: '1', ALPHA: '2' },
    });
    const { question, channel } = approvals.prepare(request, ASKED);
    expect(question).toMatchObject({
      command: 'git',
      args: ['push', 'my origin'],
      commandLine: "git push 'my origin'",
      cwd: '/real/project',
      envNames: ['ALPHA', 'ZED'],
      ruleIds: ['ask-push'],
    });
    expect(channel).toBe(NO_APPROVER_CHANNEL);
  });

  it('shows an argv request with no arguments as its program alone', () => {
    const approvals = new Approvals(() => 0);
    expect(approvals.prepare(gateRequest('create', 'ls', { args: [] }), ASKED).question.commandLine).toBe(
      'ls',
    );
  });

  it('measures the latency from the ask to the answer, never negative', async () => {
    const clock = { now: 100 };
    const approvals = new Approvals(() => clock.now);
    const asked = approvals.prepare(
      gateRequest(
        'create',
        'git push',
        {},
        withApprover(() => {
          clock.now = 350;
          return { outcome: 'deny', channel: 'test-channel' };
        }),
      ),
      ASKED,
    );
    expect(asked.latencyMs()).toBe(0); // not asked yet
    await asked.answer();
    clock.now = 10_000;
    expect(asked.latencyMs()).toBe(250);
    clock.now = 0; // a clock that went back
    const backwards = approvals.prepare(gateRequest('create', 'ls'), ASKED);
    expect(backwards.latencyMs()).toBe(0);
  });
});

describe('Approvals.prepare: an approver that gives no valid answer is unavailable', () => {
  it.each([
    ['null', () => null],
    ['a string', () => 'allow_once'],
    ['an unknown outcome', () => ({ outcome: 'allow', channel: 'test-channel' })],
    ['an outcome that is not a string', () => ({ outcome: ['allow_once'], channel: 'test-channel' })],
    ['no channel', () => ({ outcome: 'allow_once' })],
    ['a channel that is not a string', () => ({ outcome: 'allow_always', channel: 7 })],
  ])('%s', async (_label, answer) => {
    const approvals = new Approvals(() => 0);
    const asked = approvals.prepare(gateRequest('create', 'git push', {}, withApprover(answer)), ASKED);
    await expect(asked.answer()).resolves.toEqual({
      outcome: 'unavailable',
      channel: 'test-channel',
      detail: 'the approver gave no valid answer',
    });
  });

  it.each(['allow_once', 'allow_always', 'deny', 'cancelled', 'timeout', 'unavailable', 'pending'])(
    'passes a well-formed %s through',
    async (outcome) => {
      const approvals = new Approvals(() => 0);
      const answer = { outcome, channel: 'test-channel', answeredBy: 'someone' };
      const asked = approvals.prepare(
        gateRequest(
          'create',
          'git push',
          {},
          withApprover(() => answer),
        ),
        ASKED,
      );
      await expect(asked.answer()).resolves.toEqual(answer);
    },
  );

  it('an approver that throws is unavailable, and says why', async () => {
    const approvals = new Approvals(() => 0);
    const asked = approvals.prepare(
      gateRequest(
        'create',
        'git push',
        {},
        withApprover(() => {
          throw new Error('the client hung up');
        }),
      ),
      ASKED,
    );
    const answer = await asked.answer();
    expect(answer).toMatchObject({ outcome: 'unavailable', channel: 'test-channel' });
    expect(answer.detail).toMatch(/^asking failed: .*the client hung up/);
  });

  it('no approver at all is unavailable on the none channel', async () => {
    const approvals = new Approvals(() => 0);
    await expect(approvals.prepare(gateRequest('create', 'git push'), ASKED).answer()).resolves.toEqual({
      outcome: 'unavailable',
      channel: 'none',
      detail: 'this client offers no way to ask a person',
    });
  });
});

describe('refusalReason', () => {
  const base = { channel: 'mcp-elicitation' } as const;
  it.each<[ApprovalAnswer, string]>([
    [
      { ...base, outcome: 'deny', answeredBy: 'alice' },
      'declined by a person (alice via mcp-elicitation); nothing was run. The policy asks before it: P',
    ],
    [
      { ...base, outcome: 'deny' },
      'declined by a person (via mcp-elicitation); nothing was run. The policy asks before it: P',
    ],
    [
      { ...base, outcome: 'cancelled', detail: 'the request was cancelled' },
      'the approval question was cancelled before anyone approved it: the request was cancelled; nothing was run. The policy asks before it: P',
    ],
    [
      { ...base, outcome: 'timeout' },
      'nobody answered the approval question in time; nothing was run. The policy asks before it: P',
    ],
    [
      { ...base, outcome: 'pending' },
      'approval was requested from the client; nothing runs until a person answers. The policy asks before it: P',
    ],
    [
      { ...base, outcome: 'unavailable', detail: 'no elicitation' },
      'approval needed but could not be asked for: no elicitation; nothing was run. The policy asks before it: P',
    ],
  ])('%j', (answer, reason) => {
    expect(refusalReason(answer, 'P')).toBe(reason);
  });
});

describe('Approvals: which requests an allow_always covers', () => {
  async function remembered(request: ReturnType<typeof gateRequest>) {
    const approvals = new Approvals(() => 0);
    const asked = approvals.prepare(request, ASKED);
    approvals.rememberAlways(request, ASKED, asked);
    return { approvals, id: asked.question.approvalId };
  }

  it('covers the same request with its client-set variables in any order', async () => {
    const { approvals, id } = await remembered(
      gateRequest('create', 'git push', { env: { A: '1', B: '2', C: '3' } }),
    );
    expect(
      approvals.approvedAlways(gateRequest('create', 'git push', { env: { C: '3', A: '1', B: '2' } }), ASKED),
    ).toBe(id);
    expect(
      approvals.approvedAlways(gateRequest('create', 'git push', { env: { B: '2', C: '3', A: '1' } }), ASKED),
    ).toBe(id);
  });

  it('does not cover another caller scope (another ACP session), nor the unscoped server', async () => {
    const inSession = (scope?: string): CallerContext => ({ ...MCP_CALLER, ...(scope && { scope }) });
    const { approvals } = await remembered(gateRequest('create', 'git push', {}, inSession('session-a')));
    expect(
      approvals.approvedAlways(gateRequest('create', 'git push', {}, inSession('session-a')), ASKED),
    ).toBeDefined();
    expect(
      approvals.approvedAlways(gateRequest('create', 'git push', {}, inSession('session-b')), ASKED),
    ).toBeUndefined();
    expect(
      approvals.approvedAlways(gateRequest('create', 'git push', {}, inSession()), ASKED),
    ).toBeUndefined();
  });
});
