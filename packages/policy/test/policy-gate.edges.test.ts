import { mkdirSync, realpathSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { auditField } from '@termgate/audit';
import { InMemoryAuditSink } from '@termgate/audit/adapters';
import { type CommandJudge, type PolicyDecision, PolicyGate, SandboxProfiler } from '@termgate/policy';
import type { ApprovalAnswer, Approver, CallerContext } from '@termgate/termhost';
import { gateRequest, MCP_CALLER } from './support/requests.js';
import { allow, deny, TableJudge } from './support/table-judge.js';
import { tempDir } from './support/temp-dir.js';

/**
 * The gate's edges: a judge or follow-up policy that answers junk or
 * throws is a recorded deny with empty rule ids; a deny never needs a
 * sandbox profile; `allow_once` is never remembered as `allow_always`; and
 * the answer record keeps what the approver said.
 */
const POLICY = { path: '/etc/termgate/policy.yaml', sha256: 'a'.repeat(64) };

const judging = (answer: unknown): CommandJudge => ({ judge: () => answer as PolicyDecision });

const ask = (reason: string): PolicyDecision => ({
  decision: 'ask',
  ruleIds: ['ask-push'],
  reason,
  subcommands: [],
  resolvedCwd: '/real/project',
});

describe('PolicyGate: a judge that answers junk', () => {
  test.each([
    ['null', null],
    ['a string', 'allow'],
    ['rule ids that are not strings', { decision: 'allow', ruleIds: [1], reason: 'ok' }],
    ['no reason', { decision: 'allow', ruleIds: [] }],
  ])('%s is a recorded deny with no rule ids', (_name, answer) => {
    const sink = new InMemoryAuditSink();
    const gate = new PolicyGate(judging(answer), sink, POLICY);
    expect(gate.decide(gateRequest('create', 'ls'))).toEqual({
      allow: false,
      reason: 'policy engine returned an invalid decision; nothing was run',
      ruleIds: [],
    });
    expect(sink.records).toHaveLength(1);
    expect(auditField(sink.records[0]!, 'termgate.decision')).toBe('deny');
  });

  test('an answer without subcommands or cwd is taken as none: nothing made up is recorded', () => {
    const sink = new InMemoryAuditSink();
    const gate = new PolicyGate(judging({ decision: 'allow', ruleIds: [], reason: 'ok' }), sink, POLICY);
    expect(gate.decide(gateRequest('create', 'ls'))).toEqual({ allow: true, reason: 'ok' });
    expect(auditField(sink.records[0]!, 'termgate.subcommands') ?? []).toEqual([]);
  });

  test('a judge that throws is a recorded deny with no rule ids', () => {
    const judge = new TableJudge([]);
    judge.throwing = new Error('parser gone');
    const gate = new PolicyGate(judge, new InMemoryAuditSink(), POLICY);
    expect(gate.decide(gateRequest('create', 'ls'))).toEqual({
      allow: false,
      reason: 'policy engine failed: parser gone; nothing was run',
      ruleIds: [],
    });
  });
});

describe('PolicyGate: follow-ups', () => {
  test('the default follow-up policy allows and records no rule ids', () => {
    const sink = new InMemoryAuditSink();
    const gate = new PolicyGate(new TableJudge([]), sink, POLICY);
    expect(gate.decide(gateRequest('kill', 'ls'))).toEqual({
      allow: true,
      reason: 'terminal term-0123456789abcdef passed the gate at create',
    });
    expect(auditField(sink.records[0]!, 'rule.id') ?? []).toEqual([]);
  });

  test('a follow-up policy that answers junk or throws is a deny with no rule ids', () => {
    const junk = new PolicyGate(new TableJudge([]), new InMemoryAuditSink(), POLICY, {
      followUp: () => ({ decision: 'maybe' }) as never,
    });
    expect(junk.decide(gateRequest('output', 'ls'))).toEqual({
      allow: false,
      reason: 'follow-up policy returned an invalid decision',
      ruleIds: [],
    });
    const throwing = new PolicyGate(new TableJudge([]), new InMemoryAuditSink(), POLICY, {
      followUp: () => {
        throw new Error('no knob');
      },
    });
    expect(throwing.decide(gateRequest('output', 'ls'))).toEqual({
      allow: false,
      reason: 'follow-up policy failed: no knob',
      ruleIds: [],
    });
  });
});

describe('PolicyGate: a deny needs no sandbox profile', () => {
  test('a deny is answered with its own reason even when no profile can be computed', () => {
    const dir = tempDir('termgate-gate-sandbox-');
    try {
      const root = realpathSync(dir.path);
      mkdirSync(join(root, 'real'));
      symlinkSync(join(root, 'real'), join(root, 'config'));
      const sandbox = new SandboxProfiler(
        {
          mode: 'required',
          writable: [root],
          readOnly: [join(root, 'config')],
          hidden: [],
          protectGit: false,
          privateTmp: false,
          network: 'none',
        },
        { privateTmp: null, protect: { readOnly: [], hidden: [] } },
      );
      const sink = new InMemoryAuditSink();
      const gate = new PolicyGate(
        new TableJudge([{ match: 'rm x', decision: deny('no rm', ['no-rm']) }]),
        sink,
        POLICY,
        {
          sandbox,
        },
      );
      expect(gate.decide(gateRequest('create', 'rm x'))).toEqual({
        allow: false,
        reason: 'no rm',
        ruleIds: ['no-rm'],
      });
      expect(auditField(sink.records[0]!, 'termgate.sandbox')).toBeUndefined();
    } finally {
      dir.cleanup();
    }
  });
});

describe('PolicyGate: approvals', () => {
  const approverOf = (answers: ApprovalAnswer[]): Approver & { asked: number } => {
    const approver = {
      channel: 'test-channel',
      asked: 0,
      ask: async () => {
        approver.asked += 1;
        return answers.shift()!;
      },
    };
    return approver;
  };
  const caller = (approver: Approver): CallerContext => ({ ...MCP_CALLER, approver });
  const judge = () =>
    new TableJudge([
      { match: 'git push origin', decision: ask('approval needed: push') },
      { match: 'ls', decision: allow('ls is allowed', ['ls']) },
    ]);

  test('allow_once is not remembered: the same line asks again', async () => {
    const approver = approverOf([
      { outcome: 'allow_once', channel: 'test-channel' },
      { outcome: 'deny', channel: 'test-channel' },
    ]);
    const gate = new PolicyGate(judge(), new InMemoryAuditSink(), POLICY);
    const request = gateRequest('create', 'git push origin', {}, caller(approver));
    expect(await gate.decide(request)).toMatchObject({
      allow: true,
      reason: 'approved by a person (allow_once via test-channel): approval needed: push',
    });
    expect(await gate.decide(request)).toMatchObject({ allow: false });
    expect(approver.asked).toBe(2);
  });

  test('allow_always is reused, and the reuse says which approval it was', async () => {
    const approver = approverOf([{ outcome: 'allow_always', channel: 'test-channel', answeredBy: 'ana' }]);
    const sink = new InMemoryAuditSink();
    const gate = new PolicyGate(judge(), sink, POLICY);
    const request = gateRequest('create', 'git push origin', {}, caller(approver));
    expect(await gate.decide(request)).toMatchObject({
      reason: 'approved by a person (allow_always, answered by ana via test-channel): approval needed: push',
    });
    const id = auditField(sink.records[0]!, 'termgate.approval.id');
    expect(await gate.decide(request)).toMatchObject({
      allow: true,
      reason: `approved earlier for every run of this exact line (approval ${id}): approval needed: push`,
    });
    expect(approver.asked).toBe(1);
  });

  test('the answer record keeps the detail and the approval it answers', async () => {
    const approver = approverOf([
      { outcome: 'deny', channel: 'test-channel', detail: 'not today', answersApprovalId: 'earlier-id' },
      { outcome: 'deny', channel: 'test-channel' },
    ]);
    const sink = new InMemoryAuditSink();
    const gate = new PolicyGate(judge(), sink, POLICY);
    await gate.decide(gateRequest('create', 'git push origin', {}, caller(approver)));
    await gate.decide(gateRequest('create', 'git push origin', {}, caller(approver)));
    const answers = sink.records.filter((r) => auditField(r, 'event.action') === 'terminal-answer');
    expect(auditField(answers[0]!, 'termgate.approval.detail')).toBe('not today');
    expect(auditField(answers[0]!, 'termgate.approval.answers')).toBe('earlier-id');
    expect(auditField(answers[1]!, 'termgate.approval.detail')).toBeUndefined();
    expect(auditField(answers[1]!, 'termgate.approval.answers')).toBeUndefined();
  });
});
