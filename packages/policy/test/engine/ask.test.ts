import { join } from 'node:path';
import {
  type CommandRequest,
  createPolicyEngine,
  type PolicyEngine,
  parsePolicyText,
  runPolicyTests,
} from '@termgate/policy';

async function engineFor(text: string): Promise<PolicyEngine> {
  return createPolicyEngine(parsePolicyText(text, join(process.cwd(), 'p.yaml')));
}

function line(command: string, extra: Partial<CommandRequest> = {}): CommandRequest {
  return { command, args: null, cwd: process.cwd(), env: {}, ...extra };
}

const RULES = [
  '  - { id: allow-git, decision: allow, program: git }',
  '  - { id: ask-push, decision: ask, program: git, argvPrefix: [[push]], reason: pushes leave the machine }',
  '  - { id: deny-force, decision: deny, program: git, argvContains: [--force] }',
  '  - { id: allow-echo, decision: allow, program: echo }',
];

describe('ask', () => {
  test('deny over ask over allow, whatever the order of the rules', async () => {
    for (const rules of [RULES, [...RULES].reverse()]) {
      const engine = await engineFor(`default: deny\nrules:\n${rules.join('\n')}\n`);
      expect(engine.judge(line('git status')).decision).toBe('allow');
      const asked = engine.judge(line('git push origin main'));
      expect(asked).toMatchObject({ decision: 'ask', ruleIds: ['ask-push'] });
      expect(asked.reason).toBe(
        'approval needed: `git push origin main` matched ask rule ask-push (pushes leave the machine)',
      );
      expect(engine.judge(line('git push --force origin main'))).toMatchObject({
        decision: 'deny',
        ruleIds: ['deny-force'],
      });
    }
  });

  test('a line is ask when one command asks and the rest are allowed; any deny wins', async () => {
    const engine = await engineFor(`default: deny\nrules:\n${RULES.join('\n')}\n`);
    expect(engine.judge(line('echo hi && git push')).decision).toBe('ask');
    expect(engine.judge(line('git push && rm -rf x')).decision).toBe('deny');
  });

  test('default: ask asks for what no rule matches; writes with no pattern ask too', async () => {
    const engine = await engineFor(
      `default: ask\nrules:\n${RULES.join('\n')}\nwrites:\n  deny: ['/etc/**']\n  allow: ['/tmp/**']\n`,
    );
    expect(engine.judge(line('make install'))).toMatchObject({ decision: 'ask', ruleIds: [] });
    expect(engine.judge(line('echo hi > /tmp/x')).decision).toBe('allow');
    expect(engine.judge(line('echo hi > /etc/x'))).toMatchObject({
      decision: 'deny',
      ruleIds: ['writes.deny[0]'],
    });
    // A path outside /tmp whatever the checkout's location (a clone under /tmp would match /tmp/**).
    const write = engine.judge(line('echo hi > /srv/out.txt', { cwd: '/' }));
    expect(write).toMatchObject({ decision: 'ask', ruleIds: ['writes.default'] });
    expect(write.reason).toMatch(/writes\.default is ask/);
  });

  test('an ask rule matches by name like a deny rule: an untrusted program of that name still asks', async () => {
    // `./git` is not a trusted program for an allow rule, but the ask rule names it and must catch it.
    const engine = await engineFor(`default: allow\nrules:\n${RULES.join('\n')}\n`);
    expect(engine.judge(line('./git push')).decision).toBe('ask');
  });

  test('policy tests know expect: ask', async () => {
    const policy = parsePolicyText(
      `default: deny\nrules:\n${RULES.join('\n')}\ntests:\n  - { command: git push, expect: ask, rule: ask-push }\n  - { command: git status, expect: ask }\n`,
      join(process.cwd(), 'p.yaml'),
    );
    const engine = await createPolicyEngine(policy);
    const report = runPolicyTests(engine, policy);
    expect(report.passed).toBe(1);
    expect(report.results[1]!.failure).toBe('expected ask, got allow');
  });

  test('a rule with an unknown decision is refused with a clear error', () => {
    expect(() =>
      parsePolicyText('default: deny\nrules:\n  - { id: x, decision: prompt, program: git }\n', 'p.yaml'),
    ).toThrow(/invalid policy file/);
  });
});
