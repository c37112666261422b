// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the test data is policy placeholders and shell syntax, not templates
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type CommandRequest,
  createPolicyEngine,
  type PolicyEngine,
  parsePolicyText,
} from '@termgate/policy';

const RULES = `
rules:
  - { id: allow-git, decision: allow, program: git }
  - { id: deny-push, decision: deny, program: git, argvPrefix: [[push]] }
  - { id: allow-ls, decision: allow, program: ls }
  - { id: pinned, decision: allow, program: /usr/bin/make }
  - { id: contains, decision: deny, argvContains: [--force, -f], program: git }
  - { id: glob, decision: allow, glob: 'npm run *' }
  - { id: regex, decision: allow, regex: 'echo [a-z]+' }
`;

async function engineFor(text: string): Promise<PolicyEngine> {
  return createPolicyEngine(parsePolicyText(text, join(process.cwd(), 'p.yaml')));
}

function line(command: string, extra: Partial<CommandRequest> = {}): CommandRequest {
  return { command, args: null, cwd: process.cwd(), env: {}, ...extra };
}

describe('combining', () => {
  let engine: PolicyEngine;
  beforeAll(async () => {
    engine = await engineFor(`default: deny\n${RULES}`);
  });

  test('deny overrides allow for the same command, whatever the rule order', async () => {
    expect(engine.judge(line('git push origin'))).toMatchObject({ decision: 'deny', ruleIds: ['deny-push'] });
    const reversed = await engineFor(
      'default: deny\nrules:\n  - { id: deny-push, decision: deny, program: git, argvPrefix: [[push]] }\n  - { id: allow-git, decision: allow, program: git }\n',
    );
    expect(reversed.judge(line('git push origin')).decision).toBe('deny');
  });

  test('an allowed line names the allow rules of every sub-command', () => {
    const d = engine.judge(line('git status && ls'));
    expect(d).toMatchObject({ decision: 'allow', ruleIds: ['allow-git', 'allow-ls'] });
    expect(d.reason).toMatch(/`git status` by allow-git; `ls` by allow-ls/);
    expect(d.subcommands.map((c) => c.program)).toEqual(['git', 'ls']);
  });

  test('the default decides a command no rule matches, and says so', () => {
    const d = engine.judge(line('ls; whoami'));
    expect(d.decision).toBe('deny');
    expect(d.reason).toMatch(/`whoami` matched no rule and the default is deny/);
    const allowing = parsePolicyText('default: allow\n', '/p.yaml');
    return createPolicyEngine(allowing).then((e) =>
      expect(e.judge(line('whoami')).reason).toMatch(/default is allow/),
    );
  });

  test('the deny names the rule and the offending sub-command', () => {
    const d = engine.judge(line('ls && git push -f'));
    expect([...d.ruleIds].sort()).toEqual(['contains', 'deny-push']);
    expect(d.reason).toMatch(/`git push -f` matched deny rule/);
  });

  test('matchers: absolute program pins the path; a bare name does not match it', () => {
    expect(engine.judge(line('/usr/bin/make all')).decision).toBe('allow');
    expect(engine.judge(line('/usr/bin/../bin/make')).decision).toBe('allow');
    expect(engine.judge(line('make all')).decision).toBe('deny');
    expect(engine.judge(line('/bin/ls')).decision).toBe('allow');
  });

  test('matchers: argvPrefix compares whole argument tokens, from the first argument, all of them', async () => {
    // A deny rule (default allow), so that the program's identity plays no part.
    const deny = await engineFor(
      'default: allow\nrules:\n  - { id: no-run-test, decision: deny, program: npm, argvPrefix: [[run, test], [ci]] }\n',
    );
    const ruleOf = (command: string): readonly string[] => deny.judge(line(command)).ruleIds;
    expect(deny.judge(line('npm run test'))).toMatchObject({ decision: 'deny', ruleIds: ['no-run-test'] });
    expect(ruleOf('npm run test --watch')).toEqual(['no-run-test']);
    expect(ruleOf('npm ci')).toEqual(['no-run-test']);
    // Not a token prefix: a longer token, a shorter argv, a token in another place, one word split in two.
    for (const other of [
      'npm run test-and-publish',
      'npm run tests',
      'npm run',
      'npm runs test',
      'npm cit',
      'npm x run test',
      'npm run-test',
      "npm 'run test'",
    ]) {
      expect({ other, ...deny.judge(line(other)) }).toMatchObject({ other, decision: 'allow', ruleIds: [] });
    }
    // An argv request is matched on the same tokens.
    const argv = (args: string[]) => deny.judge(line('npm', { args }));
    expect(argv(['run', 'test-and-publish'])).toMatchObject({ decision: 'allow' });
    expect(argv(['run', 'test', 'x'])).toMatchObject({ decision: 'deny', ruleIds: ['no-run-test'] });
  });

  test('matchers: glob and regex match the whole normalised command', () => {
    expect(engine.judge(line('npm run "build"')).decision).toBe('allow');
    expect(engine.judge(line('npm test')).decision).toBe('deny');
    expect(engine.judge(line('echo hello')).decision).toBe('allow');
    expect(engine.judge(line('echo hello 1')).decision).toBe('deny');
  });
});

describe('cwd and env', () => {
  let root: string;
  let engine: PolicyEngine;
  beforeAll(async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'termgate-cwd-')));
    mkdirSync(join(root, 'work', 'sub'), { recursive: true });
    mkdirSync(join(root, 'outside'));
    symlinkSync(join(root, 'outside'), join(root, 'work', 'escape'));
    engine = await createPolicyEngine(
      parsePolicyText(
        `default: allow
cwd: { roots: [work] }
env: { allowClientSet: [CI, 'APP_*'], deny: [APP_SECRET, 'GIT_*'] }
rules:
  - { id: sub-only, decision: deny, program: rm, cwd: work/sub }
`,
        join(root, 'policy.yaml'),
      ),
    );
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  test('a cwd inside a root is allowed and reported resolved', () => {
    expect(engine.judge(line('ls', { cwd: join(root, 'work', 'sub') }))).toMatchObject({
      decision: 'allow',
      resolvedCwd: join(root, 'work', 'sub'),
    });
  });

  test('a symlink escaping the root is resolved and refused', () => {
    const d = engine.judge(line('ls', { cwd: join(root, 'work', 'escape') }));
    expect(d).toMatchObject({ decision: 'deny', resolvedCwd: join(root, 'outside') });
    expect(d.reason).toMatch(/outside the allowed roots/);
  });

  test('a cwd that does not exist is refused', () => {
    expect(engine.judge(line('ls', { cwd: join(root, 'nope') })).reason).toMatch(/does not exist/);
  });

  test('rule cwd scoping', () => {
    expect(engine.judge(line('rm x', { cwd: join(root, 'work', 'sub') })).ruleIds).toEqual(['sub-only']);
    expect(engine.judge(line('rm x', { cwd: join(root, 'work') })).decision).toBe('allow');
  });

  test('client env: allowClientSet admits, deny wins, anything else is refused', () => {
    const cwd = join(root, 'work');
    expect(engine.judge(line('ls', { cwd, env: { CI: '1', APP_MODE: 'x' } })).decision).toBe('allow');
    expect(engine.judge(line('ls', { cwd, env: { APP_SECRET: 'x' } })).reason).toMatch(
      /may not set APP_SECRET \(env.deny\)/,
    );
    expect(engine.judge(line('ls', { cwd, env: { HOME: '/' } })).reason).toMatch(/not in env.allowClientSet/);
    expect(engine.judge(line('ls', { cwd, env: { LD_PRELOAD: 'x' } })).decision).toBe('deny');
  });

  test('client env names are POSIX names before any glob is tried: APP_* admits none of these', () => {
    const cwd = join(root, 'work');
    for (const name of ['APP_A\nLD_PRELOAD', 'APP_$X', 'APP_;id', 'APP_\u0001', 'APP_ X', 'APP_-', 'APP_é']) {
      const d = engine.judge(line('ls', { cwd, env: { [name]: 'x' } }));
      expect(d.decision).toBe('deny');
      expect(d.reason).toContain(`${JSON.stringify(name)} is not a valid variable name`);
    }
    expect(engine.judge(line('ls', { cwd, env: { APP_OK_1: 'x' } })).decision).toBe('allow');
  });

  test('in-line assignments of denied names are refused wherever they occur', () => {
    const cwd = join(root, 'work');
    for (const l of [
      'GIT_DIR=x ls',
      'export GIT_DIR=x; ls',
      'env GIT_DIR=x ls',
      'BASH_ENV=x ls',
      'sudo LD_PRELOAD=x ls',
    ]) {
      expect([l, engine.judge(line(l, { cwd })).decision]).toEqual([l, 'deny']);
    }
    expect(engine.judge(line('FOO=1 ls', { cwd })).decision).toBe('allow');
  });
});

describe('requests and robustness', () => {
  let engine: PolicyEngine;
  beforeAll(async () => {
    engine = await engineFor(`default: deny\n${RULES}`);
  });

  test('argv requests are one command with no shell, wrappers and bash -c still judged', () => {
    expect(engine.judge({ ...line('git'), args: ['status; rm -rf /'] })).toMatchObject({ decision: 'allow' });
    expect(engine.judge({ ...line('bash'), args: ['-c', 'git push'] }).ruleIds).toEqual(['deny-push']);
    expect(engine.judge({ ...line('env'), args: ['git', 'push'] }).ruleIds).toEqual(['deny-push']);
  });

  test('allowDynamic lets judgeable lines with dynamic parts through, never parse errors', async () => {
    const lenient = await engineFor(`default: deny\nallowDynamic: true\n${RULES}`);
    expect(lenient.judge(line('ls $(git status)')).decision).toBe('allow');
    expect(lenient.judge(line('eval "$X"; ls')).decision).toBe('deny'); // eval itself is not allowed
    expect(lenient.judge(line('$X; ls')).decision).toBe('allow');
    expect(lenient.judge(line('ls "unterminated')).decision).toBe('deny');
    expect(engine.judge(line('$X; ls')).reason).toMatch(/cannot judge the command name `\$X`/);
  });

  test('judge never throws', () => {
    const broken = { ...line('ls'), cwd: undefined as unknown as string };
    expect(engine.judge(broken).decision).toBe('deny');
    expect(engine.judge(line('\0')).decision).toBe('deny');
    expect(engine.judge(line('x'.repeat(100_000))).decision).toBe('deny');
  });

  test('an internal error while judging is a deny that says so, even under default: allow', async () => {
    const permissive = await engineFor('default: allow\n');
    expect(permissive.judge(line('ls')).decision).toBe('allow');
    for (const broken of [
      { ...line('ls'), env: null as unknown as Record<string, string> },
      { ...line('ls'), args: 5 as unknown as string[] },
    ]) {
      expect(permissive.judge(broken)).toEqual({
        decision: 'deny',
        ruleIds: [],
        reason: expect.stringMatching(/^denied: internal error while judging \(.+\)$/),
        subcommands: [],
        resolvedCwd: null,
      });
    }
  });

  test('requirePassingTests refuses a policy whose embedded tests fail', async () => {
    const policy = parsePolicyText(
      'default: deny\ntests:\n  - { command: ls, expect: allow }\n',
      '/p/t.yaml',
    );
    await expect(createPolicyEngine(policy, { requirePassingTests: true })).rejects.toMatchObject({
      code: 'POLICY_TESTS_FAILED',
    });
  });
});

describe('match:/notMatch: examples are judged in a synthetic workspace, not where the server starts', () => {
  test('a workspace that is the home directory does not turn `cat .npmrc` into a read of ~/.npmrc', async () => {
    // Before, the examples were judged from the first cwd root: here the home directory.
    const policy = parsePolicyText(
      "default: allow\ncwd:\n  roots: ['~']\nrules:\n  - id: creds\n    decision: deny\n    path: ['~/.npmrc']\n" +
        "    match: ['cat ~/.npmrc']\n    notMatch: ['cat .npmrc', 'git add .npmrc']\n",
      join(process.cwd(), 'p.yaml'),
    );
    const engine = await createPolicyEngine(policy);
    expect(engine.exampleFailures()).toEqual([]);
  });

  test('${SERVER_CWD} in a path pattern and in a cwd matcher stands for that workspace', async () => {
    const policy = parsePolicyText(
      "default: allow\nrules:\n  - id: secrets\n    decision: deny\n    path: ['${SERVER_CWD}/secrets/**']\n" +
        "    match: ['cat secrets/a', 'cd secrets && cat a']\n    notMatch: ['cat src/a', 'cat ../secrets/a']\n" +
        "  - id: here\n    decision: deny\n    program: make\n    cwd: ['${SERVER_CWD}']\n    match: ['make']\n",
      join(process.cwd(), 'p.yaml'),
    );
    expect((await createPolicyEngine(policy)).exampleFailures()).toEqual([]);
  });
});
