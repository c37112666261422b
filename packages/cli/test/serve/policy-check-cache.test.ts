import {
  chmodSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import {
  POLICY_CHECKS_DIRECTORY,
  PolicyCheckCache,
  policyChecksText,
} from '../../src/serve/policy-check-cache.js';

// Outside /tmp: the suite's sandboxed checks hide /tmp, so scratch lives in /var/tmp.
let dir: string;
beforeEach(() => {
  dir = mkdtempSync('/var/tmp/termgate-policy-checks-');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const POLICY = 'default: deny\nrules:\n  - { id: ls, decision: allow, program: ls }\n';

describe("PolicyCheckCache: an entry is trusted only when it is the server's own", () => {
  test('a recorded text passes; another text, another version or a changed byte does not', () => {
    const cache = PolicyCheckCache.in(dir, '1.0.0');
    expect(cache.passed(POLICY)).toBe(false);
    expect(cache.record(POLICY)).toBe(true);
    expect(cache.passed(POLICY)).toBe(true);
    expect(cache.passed(`${POLICY} `)).toBe(false);
    expect(PolicyCheckCache.in(dir, '1.0.1').passed(POLICY)).toBe(false);
  });

  test('under a managed layer the key covers both layers: a pass with one pair is not a pass for another', () => {
    const cache = PolicyCheckCache.in(dir, '1.0.0');
    const workspace = { path: '/ws/policy.yaml', text: POLICY };
    const managed = { path: '/etc/termgate/managed.yaml', text: 'default: allow\n' };
    const layered = policyChecksText(workspace, managed);
    expect(policyChecksText(workspace, null)).toBe(POLICY);
    // The workspace policy alone passed: its layered start still runs the managed tests.
    cache.record(POLICY);
    expect(cache.passed(layered)).toBe(false);
    cache.record(layered);
    expect(cache.passed(layered)).toBe(true);
    expect(cache.passed(policyChecksText(workspace, { ...managed, text: 'default: deny\n' }))).toBe(false);
    expect(cache.passed(policyChecksText({ ...workspace, text: `${POLICY}# changed\n` }, managed))).toBe(
      false,
    );
    expect(cache.passed(policyChecksText(workspace, { ...managed, path: '/elsewhere/managed.yaml' }))).toBe(
      false,
    );
  });

  test('the directory is created owner-only; the entry is owner-only', () => {
    const cache = PolicyCheckCache.in(dir, '1.0.0');
    cache.record(POLICY);
    expect(statSync(join(dir, POLICY_CHECKS_DIRECTORY)).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, POLICY_CHECKS_DIRECTORY, cache.key(POLICY))).mode & 0o777).toBe(0o600);
  });

  test('a planted entry is ignored: group- or world-writable file or directory, a symlink, the wrong content', () => {
    const cache = PolicyCheckCache.in(dir, '1.0.0');
    const checks = join(dir, POLICY_CHECKS_DIRECTORY);
    const entry = join(checks, cache.key(POLICY));
    mkdirSync(checks, { mode: 0o700 });
    writeFileSync(entry, cache.key(POLICY), { mode: 0o600 });
    expect(cache.passed(POLICY)).toBe(true); // the control: the same entry, the server's own
    chmodSync(entry, 0o620);
    expect(cache.passed(POLICY)).toBe(false);
    chmodSync(entry, 0o600);
    chmodSync(checks, 0o777);
    expect(cache.passed(POLICY)).toBe(false);
    chmodSync(checks, 0o700);
    writeFileSync(entry, 'x'.repeat(64));
    expect(cache.passed(POLICY)).toBe(false);
    rmSync(entry);
    writeFileSync(join(dir, 'elsewhere'), cache.key(POLICY), { mode: 0o600 });
    symlinkSync(join(dir, 'elsewhere'), entry);
    expect(cache.passed(POLICY)).toBe(false);
  });

  test('a directory reached through a symlink is not trusted, and nothing is recorded there', () => {
    const real = join(dir, 'real');
    mkdirSync(real);
    symlinkSync(real, join(dir, 'link'));
    const cache = PolicyCheckCache.in(join(dir, 'link'), '1.0.0');
    expect(cache.record(POLICY)).toBe(false);
    expect(cache.passed(POLICY)).toBe(false);
  });

  const asRoot = process.geteuid?.() === 0 ? test : test.skip;
  asRoot('an entry another user owns (nobody) is not trusted, even with the right content and mode', () => {
    const cache = PolicyCheckCache.in(dir, '1.0.0');
    const checks = join(dir, POLICY_CHECKS_DIRECTORY);
    mkdirSync(checks, { mode: 0o700 });
    const entry = join(checks, cache.key(POLICY));
    writeFileSync(entry, cache.key(POLICY), { mode: 0o600 });
    chownSync(entry, 65534, 65534);
    expect(cache.passed(POLICY)).toBe(false);
    chownSync(entry, 0, 0);
    chownSync(checks, 65534, 65534);
    expect(cache.passed(POLICY)).toBe(false);
  });
});
