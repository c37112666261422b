import { auditField } from '@termgate/audit';
import { InMemoryAuditSink } from '@termgate/audit/adapters';
import { type PolicyDecision, PolicyGate } from '@termgate/policy';
import type { ApprovalAnswer, ApprovalQuestion, Approver, CallerContext } from '@termgate/termhost';
import { gateRequest, MCP_CALLER } from './support/requests.js';
import { allow, deny, TableJudge } from './support/table-judge.js';

const POLICY = { path: '/etc/termgate/policy.yaml', sha256: 'a'.repeat(64) };

function ask(reason: string, ruleIds: readonly string[]): PolicyDecision {
  return { decision: 'ask', ruleIds, reason, subcommands: [], resolvedCwd: '/real/project' };
}

const judge = () =>
  new TableJudge([
    {
      match: /^git push/,
      decision: ask('approval needed: `git push` matched ask rule ask-push', ['ask-push']),
    },
    { match: 'ls', decision: allow('ls is allowed', ['ls']) },
  ]);

/** An approver of our own port that answers from a script and records what it was asked. */
class ScriptedApprover implements Approver {
  readonly channel = 'test-channel';
  readonly questions: ApprovalQuestion[] = [];
  constructor(private readonly answer: (q: ApprovalQuestion) => Promise<ApprovalAnswer> | ApprovalAnswer) {}
  async ask(question: ApprovalQuestion): Promise<ApprovalAnswer> {
    this.questions.push(question);
    return this.answer(question);
  }
}

const answered = (outcome: ApprovalAnswer['outcome']): ApprovalAnswer => ({
  outcome,
  channel: 'test-channel',
  answeredBy: 'a-client',
});

function caller(approver?: Approver): CallerContext {
  return { ...MCP_CALLER, ...(approver && { approver }) };
}

const actions = (sink: InMemoryAuditSink) =>
  sink.records.map((r) => `${auditField(r, 'event.action')}:${auditField(r, 'termgate.decision') ?? ''}`);

describe('PolicyGate: ask', () => {
  test('records the ask before asking, the answer before answering, and the spawn names the approval', async () => {
    const sink = new InMemoryAuditSink();
    const gate = new PolicyGate(judge(), sink, POLICY);
    let seenAtAsk: string[] = [];
    const approver = new ScriptedApprover(() => {
      seenAtAsk = actions(sink);
      return answered('allow_once');
    });
    const request = gateRequest('create', 'git push origin', { env: { GIT_TRACE: '1' } }, caller(approver));
    const answer = await gate.decide(request);
    expect(seenAtAsk).toEqual(['terminal-create:ask']);
    expect(answer).toMatchObject({ allow: true, cwd: '/real/project' });
    expect(approver.questions).toEqual([
      {
        approvalId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        terminalId: request.terminalId,
        command: 'git push origin',
        args: null,
        commandLine: 'git push origin',
        cwd: '/real/project',
        envNames: ['GIT_TRACE'],
        ruleIds: ['ask-push'],
        reason: 'approval needed: `git push` matched ask rule ask-push',
      },
    ]);
    gate.onSpawned({ terminalId: request.terminalId, pid: 4242, caller: request.caller });
    expect(actions(sink)).toEqual(['terminal-create:ask', 'terminal-answer:allow', 'terminal-spawn:']);
    const id = approver.questions[0]!.approvalId;
    const [asked, answerRecord, spawn] = sink.records;
    expect(asked).toMatchObject({
      event: { type: ['info'], outcome: 'unknown' },
      termgate: { decision: 'ask', approval: { id, channel: 'test-channel' } },
    });
    expect(answerRecord).toMatchObject({
      event: { action: 'terminal-answer', type: ['info', 'allowed'], outcome: 'success' },
      termgate: {
        decision: 'allow',
        approval: { id, outcome: 'allow_once', channel: 'test-channel', answered_by: 'a-client' },
      },
    });
    expect(typeof auditField(answerRecord!, 'termgate.approval.latency_ms')).toBe('number');
    expect(spawn).toMatchObject({ termgate: { approval: { id } } });
  });

  test.each([
    ['deny', /^declined by a person \(a-client via test-channel\); nothing was run/],
    ['cancelled', /^the approval question was cancelled/],
    ['timeout', /^nobody answered the approval question in time/],
    ['unavailable', /^approval needed but could not be asked for/],
    ['pending', /^approval was requested from the client/],
  ] as const)(
    '%s refuses, says so, and is recorded as a denial that names the outcome',
    async (outcome, text) => {
      const sink = new InMemoryAuditSink();
      const gate = new PolicyGate(judge(), sink, POLICY);
      const answer = await gate.decide(
        gateRequest('create', 'git push', {}, caller(new ScriptedApprover(() => answered(outcome)))),
      );
      expect(answer).toMatchObject({ allow: false, approval: outcome, ruleIds: ['ask-push'] });
      expect((answer as { reason: string }).reason).toMatch(text);
      expect(actions(sink)).toEqual([
        'terminal-create:ask',
        `terminal-answer:${outcome === 'pending' ? 'ask' : 'deny'}`,
      ]);
      expect(sink.records[1]).toMatchObject({ termgate: { approval: { outcome } } });
    },
  );

  test('no approver: refused as approval needed but not askable, both records written', async () => {
    const sink = new InMemoryAuditSink();
    const gate = new PolicyGate(judge(), sink, POLICY);
    const answer = await gate.decide(gateRequest('create', 'git push', {}, caller()));
    expect(answer).toMatchObject({ allow: false, approval: 'unavailable' });
    expect((answer as { reason: string }).reason).toMatch(
      /^approval needed but could not be asked for: this client offers no way to ask a person; nothing was run/,
    );
    expect(sink.records[1]).toMatchObject({
      termgate: { approval: { outcome: 'unavailable', channel: 'none' } },
    });
  });

  test('an approver that throws or answers junk is unavailable, never an allow', async () => {
    for (const approver of [
      new ScriptedApprover(() => {
        throw new Error('boom');
      }),
      new ScriptedApprover(() => ({ outcome: 'yes please' }) as unknown as ApprovalAnswer),
    ]) {
      const gate = new PolicyGate(judge(), new InMemoryAuditSink(), POLICY);
      expect(await gate.decide(gateRequest('create', 'git push', {}, caller(approver)))).toMatchObject({
        allow: false,
        approval: 'unavailable',
      });
    }
  });

  test('an answer that cannot be recorded runs nothing', async () => {
    const sink = new InMemoryAuditSink();
    const gate = new PolicyGate(judge(), sink, POLICY);
    const approver = new ScriptedApprover(() => {
      sink.close();
      return answered('allow_once');
    });
    const answer = await gate.decide(gateRequest('create', 'git push', {}, caller(approver)));
    expect(answer).toMatchObject({ allow: false });
    expect((answer as { reason: string }).reason).toMatch(
      /^audit trail unavailable: .*the answer was not recorded/,
    );
  });

  test('allow_always covers this exact line in this cwd and scope only, and never outranks a deny', async () => {
    const sink = new InMemoryAuditSink();
    const rows = [
      { match: 'git push origin', decision: ask('asks', ['ask-push']) },
      { match: 'git push origin main', decision: ask('asks', ['ask-push']) },
    ];
    const table = new TableJudge(rows);
    const gate = new PolicyGate(table, sink, POLICY);
    const approver = new ScriptedApprover(() => answered('allow_always'));
    await gate.decide(gateRequest('create', 'git push origin', {}, caller(approver)));
    expect(approver.questions).toHaveLength(1);
    const again = await gate.decide(gateRequest('create', 'git push origin', {}, caller(approver)));
    expect(again).toMatchObject({ allow: true });
    expect(approver.questions).toHaveLength(1);
    const firstId = approver.questions[0]!.approvalId;
    expect(sink.records.at(-1)).toMatchObject({
      termgate: { decision: 'allow', approval: { id: firstId, reused: true } },
    });
    // A longer line, another scope: asked again (variables and cwd: the next test).
    const refusing = new ScriptedApprover(() => answered('deny'));
    expect(
      await gate.decide(gateRequest('create', 'git push origin main', {}, caller(refusing))),
    ).toMatchObject({ allow: false });
    expect(
      await gate.decide(
        gateRequest('create', 'git push origin', {}, { ...caller(refusing), scope: 'session-2' }),
      ),
    ).toMatchObject({ allow: false });
    expect(refusing.questions).toHaveLength(2);
    // The policy now denies the line: the earlier approval does not count.
    rows[0] = { match: 'git push origin', decision: deny('denied now', ['no-push']) };
    expect(await gate.decide(gateRequest('create', 'git push origin', {}, caller(approver)))).toMatchObject({
      allow: false,
      ruleIds: ['no-push'],
    });
  });

  test('allow_always is not reused for the same line with other client-set variables or in another cwd', async () => {
    // The reuse an agent would try after one "allow this exact line": the same
    // words, but a variable that changes what runs (GIT_SSH_COMMAND), another
    // value of the approved variable, or another directory. The judge here
    // resolves no cwd, so the request's own cwd is the one approved.
    const table = new TableJudge([
      { match: 'git push origin', decision: { ...ask('asks', ['ask-push']), resolvedCwd: null } },
    ]);
    const gate = new PolicyGate(table, new InMemoryAuditSink(), POLICY);
    const approved = { env: { GIT_TRACE: '1' } };
    await gate.decide(
      gateRequest(
        'create',
        'git push origin',
        approved,
        caller(new ScriptedApprover(() => answered('allow_always'))),
      ),
    );
    const refusing = new ScriptedApprover(() => answered('deny'));
    const again = (overrides: Parameters<typeof gateRequest>[2]) =>
      gate.decide(gateRequest('create', 'git push origin', overrides, caller(refusing)));
    expect(await again(approved)).toMatchObject({ allow: true });
    expect(refusing.questions).toHaveLength(0);
    for (const overrides of [
      { env: { GIT_TRACE: '1', GIT_SSH_COMMAND: 'sh -c id' } },
      { env: { GIT_TRACE: '2' } },
      { env: {} },
      { env: { GIT_TRACE: '1' }, cwd: '/work/other' },
    ]) {
      expect([overrides, await again(overrides)]).toMatchObject([overrides, { allow: false }]);
    }
    expect(refusing.questions).toHaveLength(4);
  });

  test('an allow_always of argv `git push origin` does not cover `git push --force origin` (nor other arguments)', async () => {
    // The argv form (program and arguments, no shell): the arguments are the
    // approval's key as much as the program is.
    const table = new TableJudge([{ match: /^git/, decision: ask('asks', ['ask-git']) }]);
    const gate = new PolicyGate(table, new InMemoryAuditSink(), POLICY);
    const argv = (args: string[]) => ({ command: 'git', args });
    const approving = new ScriptedApprover(() => answered('allow_always'));
    expect(
      await gate.decide(gateRequest('create', 'git', argv(['push', 'origin']), caller(approving))),
    ).toMatchObject({ allow: true });
    expect(approving.questions[0]).toMatchObject({ command: 'git', args: ['push', 'origin'] });
    const refusing = new ScriptedApprover(() => answered('deny'));
    const again = (args: string[]) => gate.decide(gateRequest('create', 'git', argv(args), caller(refusing)));
    expect(await again(['push', 'origin'])).toMatchObject({ allow: true });
    expect(refusing.questions).toHaveLength(0);
    for (const args of [['push', '--force', 'origin'], ['push'], []]) {
      expect([args, await again(args)]).toMatchObject([args, { allow: false }]);
    }
    expect(refusing.questions.map((q) => q.args)).toEqual([['push', '--force', 'origin'], ['push'], []]);
  });

  test('an approval does not change the sandbox: the same profile as an allow', async () => {
    const profile = { filesystem: { writable: ['/real/project'] } };
    const sandbox = { enabled: true, profile: () => profile } as never;
    const gate = new PolicyGate(judge(), new InMemoryAuditSink(), POLICY, { sandbox });
    const approver = new ScriptedApprover(() => answered('allow_once'));
    expect(await gate.decide(gateRequest('create', 'git push', {}, caller(approver)))).toMatchObject({
      allow: true,
      sandbox: profile,
    });
  });
});
