#!/usr/bin/env node
// Installs the Debian/Ubuntu packages termgate's sandbox and its tests use,
// when a command they provide is missing. Run by `pnpm test` and `pnpm start`
// (the README's two commands), so a fresh machine needs only Node and npm.
//
//   bubblewrap  bwrap: the kernel sandbox (policies with `sandbox.mode: required`)
//   util-linux  prlimit (RLIMIT_NPROC without a pids cgroup), setpriv (root without a cgroup v2)
//   perl-base   perl: the launcher every command starts through (essential on Debian)
//   socat       the proxy relay inside a sandbox whose network is an allowlist
//   python3-seccomp  libseccomp's bindings: compile the sandbox's syscall filter at start
//   acl         setfacl: give the sandbox user (serving as root) the workspace and caches
//   keyutils    keyctl: the kernel-attack suite checks the host's keyring with it
//   gcc, make   the usability suite's compile and build
//
// Serving as root, sandboxed commands run as the system user `termgate-sandbox`;
// this script creates it (useradd --system) when it is missing.
//   python3, curl, git: used by the sandbox escape suite as an agent would
//   rsyslog     rsyslogd: the audit-shipping test tails the trail with imfile
//   rsyslog-relp  omrelp/imrelp: the RELP delivery test (two rsyslogd on loopback)
//   chromium    the audit report's browser test (driven by playwright-core)
//   openssl     checks signed checkpoints' bytes as an independent verifier would
//   podman, runc  the Landlock tier's real-container test (podman with the runc runtime:
//               crun 1.8 refuses a host with hybrid cgroups)
//
// As root it runs apt-get itself; otherwise through `sudo -n` when that works;
// else it prints the command to run and exits 1. It never skips silently.
import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants, readdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';

// `--runtime`: only what `termgate serve` needs (the main job); without it, the tests' tools too.
const RUNTIME = [
  { command: 'bwrap', pkg: 'bubblewrap' },
  { command: 'perl', pkg: 'perl-base', dirs: ['/usr/bin'] },
  { command: 'socat', pkg: 'socat' },
  { command: 'setfacl', pkg: 'acl' },
  { command: 'prlimit', pkg: 'util-linux' },
  { command: 'python3', pkg: 'python3', dirs: ['/usr/bin'] },
  { file: /^seccomp\..*\.so$/, dir: '/usr/lib/python3/dist-packages', pkg: 'python3-seccomp' },
];
const NEEDED = process.argv.includes('--runtime')
  ? RUNTIME
  : [
      ...RUNTIME,
      { command: 'python3', pkg: 'python3' },
      { command: 'curl', pkg: 'curl' },
      { command: 'git', pkg: 'git' },
      { command: 'rsyslogd', pkg: 'rsyslog', dirs: ['/usr/sbin', '/sbin'] },
      { file: /^omrelp\.so$/, dir: '/usr/lib/x86_64-linux-gnu/rsyslog', pkg: 'rsyslog-relp' },
      { command: 'chromium', pkg: 'chromium' },
      { command: 'keyctl', pkg: 'keyutils' },
      { command: 'gcc', pkg: 'gcc' },
      { command: 'make', pkg: 'make' },
      { command: 'openssl', pkg: 'openssl' },
      { command: 'podman', pkg: 'podman' },
      { command: 'runc', pkg: 'runc', dirs: ['/usr/sbin', '/sbin'] },
    ];

const onPath = (command, extra = []) =>
  [...(process.env.PATH ?? '').split(delimiter), ...extra].some((dir) => {
    try {
      accessSync(join(dir, command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });

const hasFile = (dir, pattern) => {
  try {
    return readdirSync(dir).some((name) => pattern.test(name));
  } catch {
    return false;
  }
};
const present = (n) => (n.file ? hasFile(n.dir, n.file) : onPath(n.command, n.dirs));
const SANDBOX_USER = 'termgate-sandbox';
const userExists = spawnSync('id', ['-u', SANDBOX_USER], { stdio: 'ignore' }).status === 0;
const missing = [...new Set(NEEDED.filter((n) => !present(n)).map((n) => n.pkg))];
if (missing.length === 0 && userExists) process.exit(0);
if (process.platform !== 'linux' || !onPath('apt-get')) {
  console.error(
    `termgate: missing system packages: ${missing.join(' ')}; install them with your package manager`,
  );
  process.exit(1);
}
const asRoot = process.getuid?.() === 0;
const sudo = !asRoot && spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status === 0;
if (!asRoot && !sudo) {
  if (missing.length === 0) process.exit(0); // the sandbox user is needed only when serving as root
  console.error(`termgate: missing system packages; run: sudo apt-get install -y ${missing.join(' ')}`);
  process.exit(1);
}
const run = (args) => {
  const [cmd, ...rest] = asRoot ? args : ['sudo', '-n', ...args];
  console.error(`termgate: ${[cmd, ...rest].join(' ')}`);
  execFileSync(cmd, rest, {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
};
if (missing.length > 0) {
  run(['apt-get', 'update', '-qq']);
  run(['apt-get', 'install', '-y', '-qq', '--no-install-recommends', ...missing]);
}
if (!userExists) {
  // No home, no login, no password: it only owns what sandboxed commands create.
  run([
    'useradd',
    '--system',
    '--user-group',
    '--no-create-home',
    '--home-dir',
    '/nonexistent',
    '--shell',
    '/usr/sbin/nologin',
    SANDBOX_USER,
  ]);
}
