/**
 * A real container for the Landlock tier's test: podman (Debian's `podman`,
 * with the `runc` runtime) running the machine's own files, no image
 * downloaded, no `--privileged` and no added capability, under a seccomp
 * profile that refuses user namespaces for real: a copy of podman's
 * default profile (`/usr/share/containers/seccomp.json`, which allows
 * `clone`/`unshare` with CLONE_NEWUSER) with Docker's rule added: `clone`
 * and `unshare` only without CLONE_NEWUSER, `clone3` ENOSYS (so that libc
 * falls back to `clone`, whose flags a filter can read).
 *
 * Why these options, all of them needed on a Debian 12 host with hybrid cgroups:
 * - `--runtime runc`: crun 1.8 refuses a hybrid cgroup host ("drop all
 *   controllers from cgroupv2");
 * - a rootfs directory of `/usr` and `/etc` bound read-only (and the
 *   checkout, and `/var/tmp` for the test's world), not `--rootfs /`: runc
 *   cannot pivot_root onto the host's own root;
 * - `/sys` and `/sys/fs/cgroup` bound read-only: with the host's network,
 *   runc cannot mount a new sysfs, and its cgroup v1 mount fails here;
 * - `default_ulimits` and `no_pivot_root` in a containers.conf of the
 *   test's own (`CONTAINERS_CONF`): podman's default nofile (1048576) is
 *   above this host's hard limit.
 */
import { spawnSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import * as path from 'node:path';

const CLONE_NEWUSER = 0x10000000;
const ENOSYS = 38;

interface SeccompRule {
  names: string[];
  action: string;
  args?: { index: number; value: number; valueTwo: number; op: string }[];
  errnoRet?: number;
  [key: string]: unknown;
}

/** Podman's default profile with Docker's refusal of user namespaces without CAP_SYS_ADMIN. */
export function refusingUsernsProfile(): string {
  const profile = JSON.parse(readFileSync('/usr/share/containers/seccomp.json', 'utf8')) as {
    syscalls: SeccompRule[];
  };
  const gated = new Set(['clone', 'clone3', 'unshare']);
  for (const rule of profile.syscalls) rule.names = rule.names.filter((name) => !gated.has(name));
  profile.syscalls = profile.syscalls.filter((rule) => rule.names.length > 0);
  const withoutNewUser = [{ index: 0, value: CLONE_NEWUSER, valueTwo: 0, op: 'SCMP_CMP_MASKED_EQ' }];
  profile.syscalls.push(
    { names: ['clone', 'unshare'], action: 'SCMP_ACT_ALLOW', args: withoutNewUser },
    { names: ['clone3'], action: 'SCMP_ACT_ERRNO', errnoRet: ENOSYS },
  );
  return JSON.stringify(profile);
}

/** A container world: its configuration files and rootfs, and the argv prefix that runs a program inside. */
export interface Container {
  /** Put in front of `node …` (WireServer's `wrap`). */
  readonly wrap: readonly string[];
  /** The environment podman itself needs (`CONTAINERS_CONF`). */
  readonly env: Readonly<Record<string, string>>;
  dispose(): void;
}

/**
 * The container every command of the test runs in: `cwd` its working
 * directory, `home` its HOME, `repo` (the checkout) read-only, `/var/tmp`
 * writable (where the test's worlds are). Throws, saying why, when podman
 * cannot run a container here: the test must fail, not skip.
 */
export function podmanContainer(options: { cwd: string; home: string; repo: string }): Container {
  const dir = mkdtempSync('/var/tmp/termgate-podman-');
  const rootfs = path.join(dir, 'rootfs');
  mkdirSync(rootfs);
  for (const link of ['bin', 'sbin', 'lib', 'lib64']) {
    try {
      symlinkSync(readlinkSync(`/${link}`), path.join(rootfs, link));
    } catch {
      mkdirSync(path.join(rootfs, link), { recursive: true });
    }
  }
  for (const sub of ['usr', 'etc', 'proc', 'sys', 'dev', 'tmp', 'var/tmp', 'root', 'run', options.repo]) {
    mkdirSync(path.join(rootfs, sub), { recursive: true, mode: 0o755 });
  }
  const seccomp = path.join(dir, 'seccomp.json');
  writeFileSync(seccomp, refusingUsernsProfile());
  const conf = path.join(dir, 'containers.conf');
  writeFileSync(
    conf,
    '[containers]\ndefault_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]\n[engine]\nno_pivot_root = true\n',
  );
  const env = { CONTAINERS_CONF: conf };
  const podman = [
    'podman',
    '--runtime',
    'runc',
    'run',
    '--rm',
    '-i',
    '--network=host',
    '--security-opt',
    `seccomp=${seccomp}`,
    '-v',
    '/sys:/sys:ro',
    '-v',
    '/sys/fs/cgroup:/sys/fs/cgroup:ro',
    '-v',
    '/usr:/usr:ro',
    '-v',
    '/etc:/etc:ro',
    '-v',
    `${options.repo}:${options.repo}:ro`,
    '-v',
    '/var/tmp:/var/tmp',
    '--tmpfs',
    '/tmp:mode=1777',
    '-w',
    options.cwd,
    '--env',
    `HOME=${options.home}`,
    '--env',
    'PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin',
    '--rootfs',
    rootfs,
  ];
  const check = spawnSync(
    podman[0]!,
    [...podman.slice(1), 'sh', '-c', 'unshare -U true && echo USERNS-ALLOWED; echo ran'],
    {
      encoding: 'utf8',
      env: { ...process.env, ...env },
      timeout: 120_000,
    },
  );
  if (check.status !== 0 || !check.stdout.includes('ran')) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`podman cannot run a container here: ${check.error?.message ?? check.stderr}`);
  }
  if (check.stdout.includes('USERNS-ALLOWED')) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error('the container profile did not refuse user namespaces');
  }
  return { wrap: podman, env, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}
