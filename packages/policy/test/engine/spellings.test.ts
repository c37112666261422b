import { createPolicyEngine, type PolicyEngine, parsePolicyText } from '@termgate/policy';

let engine: PolicyEngine;

beforeAll(async () => {
  const text = [
    'default: allow',
    'rules:',
    '  - { id: ask-push, decision: ask, program: git, regex: "git push( .*)?" }',
    '  - { id: no-delete, decision: deny, regex: "kubectl delete( .*)?" }',
    '  - { id: only-status, decision: allow, program: git, argvPrefix: [[status]] }',
    '  - { id: no-sudo, decision: deny, program: sudo }',
    'env:',
    '  inherit: [PATH, HOME]',
    '  allowClientSet: [CI]',
    '  allowInline: [CI, NODE_ENV]',
  ].join('\n');
  engine = await createPolicyEngine(parsePolicyText(text, '/work/spellings.yaml'));
});

const judge = (command: string): { decision: string; ruleIds: readonly string[]; reason: string } => {
  const { decision, ruleIds, reason } = engine.judge({ command, args: null, cwd: process.cwd(), env: {} });
  return { decision, ruleIds, reason };
};

describe('deny and ask rules match the canonical form too; allow rules only the words as written', () => {
  it.each([
    ['git -p push origin main', 'ask', ['ask-push']],
    ['git --git-dir .git push', 'ask', ['ask-push']],
    ['kubectl -nprod delete pod x', 'deny', ['no-delete']],
  ])('%s → %s', (line, decision, ruleIds) => {
    expect(judge(line)).toEqual({ decision, ruleIds, reason: expect.any(String) });
  });

  it('an allow rule about a subcommand does not match after global options (a spelling never widens an allow)', () => {
    expect(judge('git status').ruleIds).toEqual(['only-status']);
    expect(judge('git -C /elsewhere status').ruleIds).toEqual([]);
  });
});

describe('words xargs supplies are unknown', () => {
  it.each([
    ['echo push | xargs git', 'ask', ['ask-push']],
    ['echo delete pod x | xargs kubectl', 'deny', ['no-delete']],
    ['echo push | xargs -I{} git {} origin', 'ask', ['ask-push']],
    ['echo id | xargs sudo', 'deny', ['no-sudo']],
  ])('%s → %s', (line, decision, ruleIds) => {
    expect(judge(line)).toEqual({ decision, ruleIds, reason: expect.any(String) });
  });

  it('a subcommand already written cannot be changed by appended words', () => {
    expect(judge('git log -1 --format=%H | xargs git show').decision).toBe('allow');
    expect(judge('echo pods | xargs kubectl get').decision).toBe('allow');
  });
});

describe('launchers are judged as launchers', () => {
  it.each([
    'chronic sudo id',
    'npx -p x sudo id',
    "npx -c 'sudo id'",
    'pnpm dlx sudo id',
    'python3 -m sudo',
    'awk \'BEGIN{system("sudo id")}\'',
    "sed -n '1e sudo id' README",
    "tar -xf a.tar --to-command='sudo id'",
    "tar -xf a.tar --to-c='sudo id'",
    'tar -cf a.tgz -Isudo f',
    "ssh -o ProxyCommand='sudo id' host",
    "ssh -vo 'proxycommand=sudo id' host",
    'scp -S sudo a host:b',
    "rsync -e 'sudo ssh' a host:b",
  ])('%s is denied by the rule on the command it runs', (line) => {
    expect(judge(line)).toEqual({ decision: 'deny', ruleIds: ['no-sudo'], reason: expect.any(String) });
  });

  it.each([
    ["make --eval='x: ; sudo id' x", 'evaluates makefile text'],
    ['make SHELL=/tmp/x all', 'chooses the program every recipe runs with'],
    ['awk \'BEGIN{c="sudo id"; system(c)}\'', 'system()'],
    ["sed 's/^/sudo /e' f", 'the `e` flag'],
    ['ssh -F ./cfg host', 'reads a configuration'],
    ['tar xIf sudo a.tar', 'old-style options'],
  ])('%s is refused: %s', (line, why) => {
    const got = judge(line);
    expect(got.decision).toBe('deny');
    expect(got.reason).toContain(why);
  });

  it.each([
    "awk -F: '{print $1}' /etc/passwd",
    "sed -i 's/a/b/' f",
    'tar -xzf a.tgz -C out',
    'ssh -o StrictHostKeyChecking=no host ls',
    'make -j4 test',
    'npx prettier --check .',
    'python3 -m pytest -q',
    'python3 -c "print(1)"',
  ])('%s stays allowed', (line) => {
    expect(judge(line).decision).toBe('allow');
  });
});

describe('env.allowInline', () => {
  it.each([
    'HOME=/tmp git status',
    'RIPGREP_CONFIG_PATH=/tmp/rgrc rg x',
    'env XDG_CONFIG_HOME=/tmp git log',
    'export GIT_DIR=/tmp/x; git status',
    'x=/tmp; export x',
    'HOME=/tmp; git status',
    'for HOME in /tmp; do git status; done',
    'read HOME <<< /tmp; git status',
  ])('%s is refused', (line) => {
    const got = judge(line);
    expect(got.decision).toBe('deny');
    expect(got.reason).toContain('not in env.allowInline');
  });

  it.each([
    'CI=1 npm test',
    'NODE_ENV=test node x.js',
    'x=abc; echo "$x"',
    'for f in a b; do echo "$f"; done',
  ])('%s is allowed (listed, or a shell variable the environment does not hold)', (line) => {
    expect(judge(line).decision).toBe('allow');
  });
});
