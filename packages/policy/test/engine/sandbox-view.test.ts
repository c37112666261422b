import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createPolicyEngine, type PolicyEngine, parsePolicyText } from '@termgate/policy';

/*
 * The gate resolves paths as the sandboxed command sees them: its private
 * /tmp starts empty and hidden paths are empty, so a symlink the host has
 * there does not steer a verdict (either way). The workspace lives outside
 * /tmp (under /var/tmp), the planted links in the host's /tmp.
 */
let root: string;
let work: string;
let hostTmp: string;
let tmpWork: string;

beforeAll(() => {
  root = realpathSync(mkdtempSync(join('/var/tmp', 'termgate-view-')));
  work = join(root, 'work');
  mkdirSync(work);
  mkdirSync(join(root, 'hidden'));
  writeFileSync(join(work, 'secret'), 'x\n');
  hostTmp = realpathSync(mkdtempSync('/tmp/termgate-view-'));
  symlinkSync(join(work, '.npmrc'), join(hostTmp, 'to-npmrc'));
  symlinkSync(join(work, 'secret'), join(hostTmp, 'to-secret'));
  symlinkSync(join(work, '.npmrc'), join(root, 'hidden', 'to-npmrc'));
  // A workspace under /tmp is bound over the private /tmp: its own links are the command's too.
  tmpWork = join(hostTmp, 'ws');
  mkdirSync(tmpWork);
  symlinkSync(join(tmpWork, '.npmrc'), join(tmpWork, 'innocent'));
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(hostTmp, { recursive: true, force: true });
});

async function engine(sandbox: string): Promise<PolicyEngine> {
  const text = [
    'default: allow',
    'writes: { default: allow, deny: ["**/.npmrc"] }',
    'rules:',
    '  - { id: no-secret, decision: deny, path: ["**/secret"] }',
    sandbox,
  ].join('\n');
  return createPolicyEngine(parsePolicyText(text, join(root, 'p.yaml')));
}

const SANDBOXED = (writable: string): string =>
  `sandbox: { mode: required, filesystem: { writable: ["${writable}"], hidden: ["/nonexistent-termgate", "HIDDEN"], privateTmp: true } }`;

describe.each([
  ["sandbox off: the host is the command's view", 'sandbox: { mode: off }', 'deny'],
  ['sandbox on: the private /tmp starts empty', 'SANDBOX', 'allow'],
])('%s', (_name, section, expected) => {
  let e: PolicyEngine;
  beforeAll(async () => {
    e = await engine(
      section === 'SANDBOX' ? SANDBOXED(work).replace('HIDDEN', join(root, 'hidden')) : section,
    );
  });

  it(`a write through a host symlink in /tmp → ${expected}`, () => {
    const d = e.judge({ command: `echo x > ${hostTmp}/to-npmrc`, args: null, cwd: work, env: {} });
    expect(d.decision).toBe(expected);
    if (expected === 'allow') expect(d.subcommands[0]?.redirects?.[0]?.path).toBe(`${hostTmp}/to-npmrc`);
  });

  it(`a path rule through a host symlink in /tmp → ${expected}`, () => {
    expect(e.judge({ command: `cat ${hostTmp}/to-secret`, args: null, cwd: work, env: {} }).decision).toBe(
      expected,
    );
  });

  it(`a write through a host symlink in a hidden directory → ${expected}`, () => {
    const d = e.judge({ command: `echo x > ${root}/hidden/to-npmrc`, args: null, cwd: work, env: {} });
    expect(d.decision).toBe(expected);
  });
});

describe('sandbox on, workspace under /tmp', () => {
  it('the workspace is bound over the private /tmp: its symlinks are followed as the command follows them', async () => {
    const e = await engine(SANDBOXED(tmpWork).replace('HIDDEN', join(root, 'hidden')));
    const d = e.judge({ command: 'echo x > innocent', args: null, cwd: tmpWork, env: {} });
    expect({ decision: d.decision, ruleIds: d.ruleIds }).toEqual({
      decision: 'deny',
      ruleIds: ['writes.deny[0]'],
    });
  });
});

describe('a link the same line makes', () => {
  it('ln -sf … /tmp/x; echo … > /tmp/x is refused under every view', async () => {
    for (const section of [
      'sandbox: { mode: off }',
      SANDBOXED(work).replace('HIDDEN', join(root, 'hidden')),
    ]) {
      const e = await engine(section);
      const d = e.judge({
        command: `ln -sf ${work}/.npmrc /tmp/x; echo script-shell=/tmp/s > /tmp/x`,
        args: null,
        cwd: work,
        env: {},
      });
      expect(d.decision).toBe('deny');
      expect(d.reason).toContain('earlier in the line links the file it writes');
    }
  });
});
