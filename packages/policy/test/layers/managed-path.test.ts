import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
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

  test('a system file is in force without a flag', () => {
    expect(managedPolicyPath(null, system)).toBe(system);
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
