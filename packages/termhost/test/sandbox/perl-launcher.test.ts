import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type LaunchSteps, launch } from '../../src/sandbox/perl-launcher.js';

const AS_ROOT = process.getuid?.() === 0;
// CI runs as root: there the identity cases must run, never skip.
const rootOnly = AS_ROOT || process.env.CI ? test : test.skip;
const scratch = (): string => mkdtempSync(join('/var/tmp', 'termgate-launcher-'));

/** Runs `program` through the launcher with `steps`, as the tests' own user. */
function run(steps: LaunchSteps, program: string[], env: Record<string, string> = {}) {
  const launched = launch('/usr/bin/perl', steps, program, { PATH: '/usr/bin:/bin', ...env });
  return spawnSync(launched.argv[0]!, launched.argv.slice(1), { env: launched.env, encoding: 'utf8' });
}

describe('the Perl launcher', () => {
  test('the script compiles under strict, with every step', () => {
    const argv = launch(
      '/usr/bin/perl',
      {
        argsFile: '/a',
        cgroups: ['/c'],
        dataBytes: 1,
        dropPtrace: true,
        identity: { uid: 1, gid: 1 },
        namespaces: { user: '/u', net: '/n' },
        inotify: { instances: 64, watches: 4096 },
        keyring: true,
      },
      ['/bin/true'],
      {},
    ).argv;
    const check = spawnSync('/usr/bin/perl', ['-c', '-Mstrict', '-e', argv[2]!], { encoding: 'utf8' });
    expect(check.stderr).toMatch(/syntax OK/);
    expect(check.status).toBe(0);
  });

  test('the inotify bounds are set only in a user namespace entered: without one the step is refused', () => {
    expect(() =>
      launch('/usr/bin/perl', { inotify: { instances: 1, watches: 1 } }, ['/bin/true'], {}),
    ).toThrow(/needs the namespaces step/);
  });

  test('opens the arguments file as fd 4 and removes it before the program runs', () => {
    const file = join(scratch(), 'args');
    writeFileSync(file, 'the mounts\n');
    const result = run({ argsFile: file }, ['sh', '-c', 'cat <&4; test -e "$0" && echo still-there', file]);
    expect(result.stdout).toBe('the mounts\n');
    expect(existsSync(file)).toBe(false);
  });

  test('a step that fails runs nothing, exits non-zero and says why on stderr', () => {
    const marker = join(scratch(), 'ran');
    const result = run({ cgroups: ['/nonexistent-cgroup'] }, ['touch', marker]);
    expect(result.status).toBe(125);
    expect(result.stderr).toMatch(/^termgate: cannot open the cgroup \/nonexistent-cgroup/);
    expect(existsSync(marker)).toBe(false);
  });

  test('PERL* and LD_* never reach the launcher, and the program gets them back', () => {
    const dir = scratch();
    // A module that PERL5OPT/PERL5LIB would load into the launcher (which may run as root).
    const marker = join(dir, 'pwned');
    writeFileSync(join(dir, 'Pwn.pm'), `open(my $f, '>', '${marker}'); 1;\n`);
    const env = { PERL5OPT: '-MPwn', PERL5LIB: dir, LD_LIBRARY_PATH: '/nowhere' };
    const result = run({ keyring: true }, ['sh', '-c', 'echo "$PERL5OPT|$PERL5LIB|$LD_LIBRARY_PATH"'], env);
    expect(result.status).toBe(0);
    expect(existsSync(marker)).toBe(false);
    expect(result.stdout).toBe(`-MPwn|${dir}|/nowhere\n`);
    // The attack is real: a perl that gets them runs the module.
    spawnSync('/usr/bin/perl', ['-e', '1'], { env: { ...env, PATH: '/usr/bin:/bin' } });
    expect(existsSync(marker)).toBe(true);
  });

  test('a locale the system lacks adds nothing to the output', () => {
    const result = run({ keyring: true }, ['sh', '-c', 'echo "[$PERL_BADLANG]"'], {
      LC_ALL: 'xx_YY.UTF-8',
      LANG: 'xx_YY.UTF-8',
    });
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('[]\n');
  });

  test('sets RLIMIT_DATA and joins a fresh, empty session keyring', () => {
    const keyringOf = (text: string): string => /^\s*(\d+) /m.exec(text)?.[1] ?? 'none';
    const outside = spawnSync('keyctl', ['show', '@s'], { encoding: 'utf8' }).stdout;
    const result = run({ dataBytes: 300 * 1024 * 1024, keyring: true }, [
      'sh',
      '-c',
      'grep "Max data size" /proc/self/limits; keyctl show @s',
    ]);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/Max data size\s+314572800\s+314572800/);
    expect(keyringOf(result.stdout)).toMatch(/^\d+$/);
    expect(keyringOf(result.stdout)).not.toBe(keyringOf(outside));
    // Only the keyring itself: nothing linked in it.
    expect(result.stdout.split('\n').filter((l) => /^\s*\d+ /.test(l))).toHaveLength(1);
  });

  rootOnly('as root, drops to the identity with no supplementary groups and no capabilities', () => {
    const result = run({ identity: { uid: 65534, gid: 65534 }, dropPtrace: true }, [
      'sh',
      '-c',
      'id -u; id -g; grep -E "^(Groups|CapEff|CapPrm|CapBnd):" /proc/self/status',
    ]);
    expect(result.status).toBe(0);
    const [uid, gid] = result.stdout.split('\n');
    expect([uid, gid]).toEqual(['65534', '65534']);
    expect(result.stdout).toMatch(/^Groups:\s*$/m);
    expect(result.stdout).toMatch(/^CapEff:\s+0+$/m);
    expect(result.stdout).toMatch(/^CapPrm:\s+0+$/m);
    const bounding = BigInt(`0x${/CapBnd:\s+([0-9a-f]+)/.exec(result.stdout)![1]}`);
    expect(bounding & (1n << 19n)).toBe(0n);
  });
});
