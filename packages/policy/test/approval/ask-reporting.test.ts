import { ReportModelBuilder } from '@termgate/audit';
import { InMemoryAuditSink } from '@termgate/audit/adapters';
import { lintPolicy, PolicyGate, parsePolicyText } from '@termgate/policy';
import type { ApprovalAnswer, Approver } from '@termgate/termhost';
import { gateRequest, MCP_CALLER } from '../support/requests.js';
import { TableJudge } from '../support/table-judge.js';

const POLICY = { path: '/etc/termgate/policy.yaml', sha256: 'a'.repeat(64) };

function approver(outcome: ApprovalAnswer['outcome']): Approver {
  return { channel: 'test', ask: async () => ({ outcome, channel: 'test', answeredBy: 'person-app' }) };
}

describe('ask in the review report and the linter', () => {
  test.each([
    ['allow_once', 'allow', /^approved by a person/],
    ['deny', 'deny', /^declined by a person/],
  ] as const)('a %s answer decides how the report shows the terminal', async (outcome, shown, reason) => {
    const sink = new InMemoryAuditSink();
    const judge = new TableJudge([
      {
        match: 'git push',
        decision: {
          decision: 'ask',
          ruleIds: ['ask-push'],
          reason: 'asks',
          subcommands: [],
          resolvedCwd: null,
        },
      },
    ]);
    const gate = new PolicyGate(judge, sink, POLICY);
    await gate.decide(gateRequest('create', 'git push', {}, { ...MCP_CALLER, approver: approver(outcome) }));
    const builder = new ReportModelBuilder();
    for (const record of sink.records) builder.add(record);
    const [terminal] = builder.result().terminals;
    expect(terminal).toMatchObject({ decision: shown, command: 'git push', rules: ['ask-push'] });
    expect(terminal!.reason).toMatch(reason);
  });

  test('default ask without writes.default: a writable policy file is warned about (a person may approve the write)', () => {
    const policy = parsePolicyText('default: ask\n', '/tmp/termgate-lint/p.yaml');
    expect(lintPolicy(policy).map((w) => w.message)).toContainEqual(
      expect.stringMatching(/may be written by a redirection a person approves/),
    );
  });
});
