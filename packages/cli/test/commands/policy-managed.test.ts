import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { policyCommand } from '../../src/commands/policy.js';

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() };
  let out = '';
  let err = '';
  io.stdout.on('data', (c: Buffer) => {
    out += c.toString();
  });
  io.stderr.on('data', (c: Buffer) => {
    err += c.toString();
  });
  io.stdin.end('');
  const code = await policyCommand(argv, io);
  return { code, out, err };
}

const MANAGED = `default: allow
env: { allowClientSet: ['*'] }
rules:
  - { id: no-push, decision: deny, program: git, argvPrefix: [[push]] }
  - { id: ask-deploy, decision: ask, program: kubectl }
tests:
  - { command: git push, expect: deny, rule: no-push }
`;

const WORKSPACE = `default: deny
rules:
  - { id: git, decision: allow, program: git, match: ['git push origin'] }
  - { id: kube, decision: allow, program: kubectl }
`;

let dir: string;
let managed: string;
let workspace: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'termgate-cli-managed-'));
  managed = join(dir, 'managed.yaml');
  workspace = join(dir, 'workspace.yaml');
  writeFileSync(managed, MANAGED);
  writeFileSync(workspace, WORKSPACE);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('policy explain names the layer that decided', () => {
  test.each([
    ['git push origin', 1, 'deny', 'managed', ['managed:no-push']],
    ['kubectl apply', 3, 'ask', 'managed', ['managed:ask-deploy']],
    ['git status', 0, 'allow', 'workspace', ['git']],
    ['make', 1, 'deny', 'workspace', []],
  ] as const)('%s → %s', async (line, code, decision, layer, ruleIds) => {
    const json = await run([
      'explain',
      workspace,
      '--managed-policy',
      managed,
      '--json',
      '--cwd',
      dir,
      '--',
      line,
    ]);
    expect(json.code).toBe(code);
    expect(JSON.parse(json.out)).toMatchObject({ decision, layer, ruleIds });
    const text = await run(['explain', workspace, '--managed-policy', managed, '--cwd', dir, '--', line]);
    expect(text.out).toContain(`layer:    ${layer} (${layer === 'managed' ? managed : workspace})`);
    // Both layers' verdicts are shown, the deciding one first.
    const sections = [...text.out.matchAll(/^commands, (\w+) layer/gm)].map((m) => m[1]);
    expect(sections).toEqual(layer === 'managed' ? ['managed', 'workspace'] : ['workspace', 'managed']);
  });

  test('without a managed layer, no layer is named', async () => {
    const r = await run(['explain', workspace, '--json', '--cwd', dir, '--', 'git push']);
    expect(JSON.parse(r.out)).not.toHaveProperty('layer');
    expect(r.code).toBe(0);
  });
});

describe('policy check and test under a managed layer', () => {
  test('check warns where the workspace tries to loosen the managed layer, by rule, and says the managed tests passed', async () => {
    const r = await run(['check', workspace, '--managed-policy', managed]);
    expect(r.code).toBe(0);
    expect(r.out).toContain(
      `managed: ${managed}: default allow, 2 rule(s), 1 test(s) passed on the layered result`,
    );
    expect(r.err).toContain(
      `warning: ${workspace}: rules[0] (git): rule "git" would allow "git push origin", which the managed deny rule managed:no-push overrides [loosens-managed]`,
    );
  });

  test('check and test fail when a managed test fails on the layered result', async () => {
    const strict = join(dir, 'strict-managed.yaml');
    writeFileSync(strict, 'default: allow\ntests:\n  - { command: make, expect: allow }\n');
    for (const sub of ['check', 'test']) {
      const r = await run([sub, workspace, '--managed-policy', strict]);
      expect(r.code).toBe(1);
      expect(r.err).toContain(`${strict}:3:5: "make": expected allow, got deny with ${workspace} added`);
    }
  });

  test('an invalid managed file is an error, not a missing layer', async () => {
    const bad = join(dir, 'bad-managed.yaml');
    writeFileSync(bad, 'default: sometimes\n');
    const r = await run(['explain', workspace, '--managed-policy', bad, '--', 'ls']);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`invalid policy file ${bad}`);
  });
});
