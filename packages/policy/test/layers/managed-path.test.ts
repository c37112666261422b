import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_MANAGED_POLICY_PATH, managedPolicyPath } from '@termgate/policy';

describe('which managed policy file is in force', () => {
  let dir: string;
  let system: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'termgate-managed-path-'));
    system = join(dir, 'managed.yaml');
    writeFileSync(system, 'default: deny\n');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('the default system path is /etc/termgate/managed.yaml', () => {
    expect(DEFAULT_MANAGED_POLICY_PATH).toBe('/etc/termgate/managed.yaml');
  });

  test('no system file: none, or the one asked for', () => {
    const absent = join(dir, 'absent.yaml');
    expect(managedPolicyPath(null, absent)).toBeNull();
    expect(managedPolicyPath('/x/m.yaml', absent)).toBe('/x/m.yaml');
  });

  const asRoot = process.getuid?.() === 0;

  test(`a system file is in force without a flag ${asRoot ? '(root-owned here)' : '(refused here: not root-owned)'}`, () => {
    if (asRoot) expect(managedPolicyPath(null, system)).toBe(system);
    else expect(() => managedPolicyPath(null, system)).toThrow(/is owned by uid \d+, not root/);
  });

  test('attack: a system file others may write is not trusted', () => {
    const sub = join(dir, 'writable-file');
    mkdirSync(sub, { mode: 0o755 });
    const file = join(sub, 'managed.yaml');
    writeFileSync(file, 'default: deny\n');
    chmodSync(file, 0o666);
    expect(() => managedPolicyPath(null, file)).toThrow(
      asRoot ? /writable by its group or others \(mode 666\)/ : /not root/,
    );
  });

  test('attack: a system file in a directory others may write is not trusted (they could replace it)', () => {
    const sub = join(dir, 'writable-dir');
    mkdirSync(sub);
    chmodSync(sub, 0o777);
    const file = join(sub, 'managed.yaml');
    writeFileSync(file, 'default: deny\n');
    chmodSync(file, 0o644);
    expect(() => managedPolicyPath(null, file)).toThrow(
      asRoot ? /its directory .*writable-dir is writable by its group or others \(mode 777\)/ : /not root/,
    );
  });

  test('attack: a flag cannot replace the system file', () => {
    expect(() => managedPolicyPath(join(dir, 'lenient.yaml'), system)).toThrow(
      /managed policy .*managed\.yaml is in force: --managed-policy .*lenient\.yaml cannot replace it/,
    );
  });

  test('a flag naming the system file itself (through a link) is the same file', () => {
    const link = join(dir, 'link.yaml');
    symlinkSync(system, link);
    expect(managedPolicyPath(link, system)).toBe(system);
  });

  test('a system path that cannot be examined counts as present, so loading it fails closed', () => {
    // A name too long to stat (ENAMETOOLONG) is not "no such file".
    const unstattable = join(dir, 'x'.repeat(5000));
    expect(managedPolicyPath(null, unstattable)).toBe(unstattable);
  });
});
