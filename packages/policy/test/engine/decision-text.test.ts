// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the test data is policy placeholders, not templates
import { join } from 'node:path';
import {
  type CommandRequest,
  createPolicyEngine,
  type PolicyEngine,
  parsePolicyText,
} from '@termgate/policy';

/**
 * What the engine decides and says where no rule speaks: a line with no
 * command, the text of a refusal (what an agent reads to correct itself),
 * and a policy whose own examples fail, which is refused at load.
 */
const file = join(process.cwd(), 'p.yaml');
const engineFor = (text: string): Promise<PolicyEngine> => createPolicyEngine(parsePolicyText(text, file));
const line = (command: string, extra: Partial<CommandRequest> = {}): CommandRequest => ({
  command,
  args: null,
  cwd: process.cwd(),
  env: {},
  ...extra,
});

describe('a line with no command', () => {
  test.each([
    ['allow', 'allowed'],
    ['deny', 'denied'],
    ['ask', 'approval needed'],
  ])('takes the default (%s), and says so', async (verdict, word) => {
    const engine = await engineFor(`default: ${verdict}\n`);
    expect(engine.judge(line('# nothing to run'))).toMatchObject({
      decision: verdict,
      ruleIds: [],
      reason: `${word}: no command to run; the default (${verdict}) decided`,
    });
  });
});

test('an internal error while judging explains nothing it did not judge', async () => {
  const engine = await engineFor('default: allow\n');
  const broken = { ...line('ls'), env: null as unknown as Record<string, string> };
  expect(engine.explain(broken)).toMatchObject({ verdicts: [], writes: [], refusals: [] });
  expect(engine.explain(broken).analysis.commands).toEqual([]);
});

describe('the text of a decision', () => {
  let engine: PolicyEngine;
  beforeAll(async () => {
    engine = await engineFor(
      'default: allow\nrules:\n  - { id: no-rm, decision: deny, program: rm }\n  - { id: no-rm-2, decision: deny, program: rm, reason: twice }\n' +
        "writes:\n  default: allow\n  deny: ['**/.git/**']\n",
    );
  });

  test('every rule that denies is named; every part of the refusal is kept', () => {
    expect(engine.judge(line('rm x; ls > .git/a 2> .git/b')).reason).toBe(
      'denied: `rm x` matched deny rule no-rm, no-rm-2 (twice); ' +
        `\`> .git/a\` writes ${process.cwd()}/.git/a, which writes.deny[0] (**/.git/**) forbids; ` +
        `\`2> .git/b\` writes ${process.cwd()}/.git/b, which writes.deny[0] (**/.git/**) forbids`,
    );
  });

  test('a long command is shown cut at 80 characters, its white space folded', () => {
    const long = `rm ${'x'.repeat(100)}`;
    expect(engine.judge(line(long)).reason).toBe(
      `denied: \`${long.slice(0, 77)}...\` matched deny rule no-rm, no-rm-2 (twice)`,
    );
    const exactly80 = `rm ${'y'.repeat(77)}`;
    expect(engine.judge(line(exactly80)).reason).toContain(`\`${exactly80}\``);
    expect(engine.judge(line('rm "a \t  b"')).reason).toContain('`rm a b`');
  });

  test('argv is one command: a shell operator in it is a word, not a redirection', () => {
    expect(engine.judge({ ...line('ls'), args: ['>', '.git/config'] }).decision).toBe('allow');
    expect(engine.judge({ ...line('rm x; ls'), args: [] }).decision).toBe('allow');
    expect(engine.judge(line('ls > out.txt')).decision).toBe('allow');
    expect(engine.judge(line('ls > .git/config')).decision).toBe('deny');
    expect(engine.judge({ ...line('rm'), args: [] }).decision).toBe('deny');
  });
});

describe('problems, asks and allowDynamic', () => {
  test('a problem inside a nested shell names the shells it is in', async () => {
    const engine = await engineFor('default: allow\n');
    expect(engine.judge(line('sh -c "bash -c \'\\$X\'"')).reason).toBe(
      'denied: cannot judge the command name `$X` is built from an expansion (in sh -c > bash -c)',
    );
    expect(engine.judge(line('$X')).reason).toBe(
      'denied: cannot judge the command name `$X` is built from an expansion',
    );
  });

  test('an ask names only what asks: not the allowed writes, every asking command', async () => {
    const engine = await engineFor(
      'default: allow\nrules:\n  - { id: ask-push, decision: ask, program: git, argvPrefix: [[push]] }\n' +
        "writes:\n  default: deny\n  allow: ['/dev/null']\n",
    );
    expect(engine.judge(line('git push a > /dev/null; git push b'))).toMatchObject({
      decision: 'ask',
      ruleIds: ['ask-push'],
      reason:
        'approval needed: `git push a` matched ask rule ask-push; `git push b` matched ask rule ask-push',
    });
  });

  test('allowDynamic also lets a write through a link made earlier in the line', async () => {
    const text = 'default: allow\n';
    const strict = await engineFor(text);
    const lenient = await engineFor(`${text}allowDynamic: true\n`);
    const linked = line('ln -s /etc x; ls > x', { cwd: '/tmp' });
    expect(strict.judge(linked).reason).toMatch(/earlier in the line links the file it writes/);
    expect(lenient.judge(linked).decision).toBe('allow');
  });
});

describe('the policy checks itself at load', () => {
  test('a rule whose match: or notMatch: example fails refuses the policy, naming rule, key and line', async () => {
    const text =
      'default: allow\nrules:\n  - id: git\n    decision: deny\n    program: git\n' +
      "    match: ['ls']\n    notMatch: ['git status']\n";
    await expect(engineFor(text)).rejects.toMatchObject({
      code: 'POLICY_INVALID',
      message: expect.stringContaining(`2 rule example(s) of ${file} failed`),
      issues: [
        expect.objectContaining({
          key: 'rules[0].match',
          message: 'rule "git" does not match its match example "ls"',
        }),
        expect.objectContaining({
          key: 'rules[0].notMatch',
          message: 'rule "git" matches its notMatch example "git status"',
        }),
      ],
    });
    await expect(
      engineFor(
        "default: allow\nrules:\n  - id: git\n    decision: deny\n    program: git\n    match: ['ls && git status']\n" +
          "  - id: secrets\n    decision: deny\n    program: cat\n    path: ['${SERVER_CWD}/secrets/**']\n    match: ['cd secrets && cat a']\n",
      ),
    ).resolves.toBeDefined();
  });

  test('a rule without examples checks none: a catch-all rule loads', async () => {
    await expect(
      engineFor("default: allow\nrules:\n  - { id: all, decision: ask, regex: '.*' }\n"),
    ).resolves.toBeDefined();
  });

  test('requirePassingTests names each failing embedded test; passing ones load', async () => {
    const policy = parsePolicyText(
      'default: deny\ntests:\n  - { command: ls, expect: allow }\n  - { command: pwd, expect: deny }\n',
      file,
    );
    await expect(createPolicyEngine(policy, { requirePassingTests: true })).rejects.toMatchObject({
      code: 'POLICY_TESTS_FAILED',
      message: expect.stringContaining(`1 embedded test(s) of ${file} failed`),
      issues: [expect.objectContaining({ key: 'tests', message: expect.stringMatching(/^"ls": .+/) })],
    });
    const passing = parsePolicyText('default: deny\ntests:\n  - { command: pwd, expect: deny }\n', file);
    await expect(createPolicyEngine(passing, { requirePassingTests: true })).resolves.toBeDefined();
  });
});
