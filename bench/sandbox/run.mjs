// Sandbox benchmark, side by side in one run (interleaved, order rotated):
//  1. cycle cost: create + wait + release of `true` through ProcessTerminalHost,
//     unsandboxed vs in the bubblewrap sandbox (network none: nsenter into the
//     shared namespace, then bwrap), with the floor of a bare `bwrap … true`
//     and the kernel layers' share of it: bare bwrap with and without them (the
//     Perl launcher: a cgroup per terminal, RLIMIT_DATA, the sandbox user as
//     root, the session keyring; then `--seccomp`, `--disable-userns`, the
//     private /tmp), and the previous chain of the same layers (setpriv, a perl
//     keyring one-liner, prlimit) for comparison; the host cycle also with
//     rlimits only (no cgroup);
//  2. proxy throughput: curl downloading a file from a loopback HTTP server,
//     directly (unsandboxed) vs from inside a sandbox whose allowlist names
//     it (socat relay + termgate's proxy).
// Usage: npx -y pnpm@12.4.2 run build && node bench/sandbox/run.mjs [cycles] [downloads] [MiB]
// Prints a markdown report. Not a test: nothing is asserted.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { CrossSpawnProcessSpawner } from '../../packages/termhost/dist/adapters/index.js';
import { ProcessTerminalHost } from '../../packages/termhost/dist/index.js';
import {
  BubblewrapSandbox,
  bubblewrapArguments,
  compileSeccompFilter,
  DEFAULT_SANDBOX_LIMITS,
  grantSandboxAccess,
  launcherArgv,
  resolveSandboxIdentity,
  TerminalCgroups,
} from '../../packages/termhost/dist/sandbox/index.js';
import { AllowAllGate, NoopTerminalObserver } from '../terminal-doubles.mjs';

const cycles = Number(process.argv[2] ?? 300);
const downloads = Number(process.argv[3] ?? 10);
const mib = Number(process.argv[4] ?? 256);
const workspace = mkdtempSync(join(tmpdir(), 'termgate-bench-sandbox-'));
const profile = (network) => ({
  filesystem: { writable: [workspace], readOnly: [], hiddenDirectories: [], hiddenFiles: [], tmp: null },
  network,
});
const gate = (network) => ({ decide: () => ({ allow: true, sandbox: profile(network) }) });

// As root, commands run as the install step's sandbox user (as `serve` does).
const identity = process.getuid() === 0 ? resolveSandboxIdentity('termgate-sandbox') : null;
if (identity !== null) grantSandboxAccess(identity, [workspace], []);
const none = await BubblewrapSandbox.start({
  network: 'none',
  identity,
  runtimeDir: mkdtempSync(join(tmpdir(), 'tg-rt-')),
});
const observer = new NoopTerminalObserver();
const plainHost = new ProcessTerminalHost({
  cwd: workspace,
  gate: new AllowAllGate(),
  observer,
  spawner: new CrossSpawnProcessSpawner(),
});
const sandboxHost = new ProcessTerminalHost({
  cwd: workspace,
  gate: gate('none'),
  observer,
  spawner: none.spawner(new CrossSpawnProcessSpawner()),
});
const noCgroups = await BubblewrapSandbox.start({
  network: 'none',
  identity,
  cgroups: false,
  runtimeDir: mkdtempSync(join(tmpdir(), 'tg-rt-')),
});
const rlimitHost = new ProcessTerminalHost({
  cwd: workspace,
  gate: gate('none'),
  observer,
  spawner: noCgroups.spawner(new CrossSpawnProcessSpawner()),
});

async function hostCycle(host) {
  const id = await host.create({ command: 'true', args: [] });
  await host.waitForExit(id);
  await host.release(id);
}

async function raw(program, args) {
  const child = spawn(program, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.resume();
  child.stderr.resume();
  await once(child, 'close');
}

// The bare floor: what bubblewrap's own start costs, without termgate: the
// arguments a command gets (bubblewrapArguments), with the workspace writable.
const BWRAP = [
  ...bubblewrapArguments(
    {
      filesystem: { writable: [workspace], readOnly: [], hiddenDirectories: [], hiddenFiles: [], tmp: null },
      network: 'all',
    },
    workspace,
  ),
  'true',
];

// The same, with the kernel layers every command now gets: the launcher, then bwrap.
const filter = compileSeccompFilter(join(mkdtempSync(join(tmpdir(), 'tg-rt-')), 'seccomp.bpf'));
const cgroups = TerminalCgroups.detect();
const limits = DEFAULT_SANDBOX_LIMITS;
const layeredBwrap = [
  'bwrap',
  ...bubblewrapArguments(
    {
      filesystem: {
        writable: [workspace],
        readOnly: [],
        hiddenDirectories: [],
        hiddenFiles: [],
        tmp: '/tmp',
      },
      network: 'all',
    },
    workspace,
    { seccompFd: 3, disableUserns: true, tmpBytes: limits.tmpMiB * 1024 * 1024 },
  ),
];
const PRLIMIT = ['/usr/bin/prlimit', `--nproc=${limits.processes}:${limits.processes}`, '--'];
async function layered(withCgroups = true) {
  const cgroup = withCgroups
    ? (cgroups?.create({ memoryBytes: limits.memoryMiB * 1024 * 1024, pids: limits.processes }) ?? null)
    : null;
  const argv = launcherArgv(
    '/usr/bin/perl',
    {
      ...(cgroup !== null && { cgroups: cgroup.directories }),
      dataBytes: limits.memoryMiB * 1024 * 1024,
      ...(identity !== null && { identity }),
      keyring: true,
    },
    [...layeredBwrap, ...(cgroup === null ? PRLIMIT : []), 'true'],
  );
  await withFilter(argv);
  cgroup?.remove();
}

// The previous chain of the same layers: setpriv, a perl keyring one-liner, bwrap, prlimit.
const PREVIOUS = [
  ...(identity === null
    ? []
    : ['/usr/bin/setpriv', `--reuid=${identity.uid}`, `--regid=${identity.gid}`, '--clear-groups', '--']),
  '/usr/bin/perl',
  '-e',
  'syscall(250, 1, 0) >= 0 or die; exec { $ARGV[0] } @ARGV or die;',
  '--',
  ...layeredBwrap,
  '/usr/bin/prlimit',
  `--nproc=${limits.processes}:${limits.processes}`,
  `--data=${limits.memoryMiB * 1024 * 1024}:${limits.memoryMiB * 1024 * 1024}`,
  '--',
  'true',
];

async function withFilter(argv) {
  const fd = openSync(filter.path, 'r');
  try {
    const child = spawn(argv[0], argv.slice(1), {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe', fd],
    });
    child.stdout.resume();
    child.stderr.resume();
    await once(child, 'close');
  } finally {
    closeSync(fd);
  }
}

const variants = [
  { name: 'host, unsandboxed', run: () => hostCycle(plainHost) },
  {
    name: 'host, sandboxed (network none)',
    run: () => hostCycle(sandboxHost),
    baseline: 'host, unsandboxed',
  },
  {
    name: 'host, sandboxed (network none), rlimits only',
    run: () => hostCycle(rlimitHost),
    baseline: 'host, unsandboxed',
  },
  { name: 'raw spawn `true`', run: () => raw('true', []) },
  { name: 'bare `bwrap … true`', run: () => raw('bwrap', BWRAP), baseline: 'raw spawn `true`' },
  {
    name: 'bare `bwrap … true` + kernel layers (launcher)',
    run: () => layered(true),
    baseline: 'bare `bwrap … true`',
  },
  {
    name: 'bare `bwrap … true` + kernel layers (launcher), rlimits only',
    run: () => layered(false),
    baseline: 'bare `bwrap … true`',
  },
  {
    name: 'bare `bwrap … true` + kernel layers (previous chain)',
    run: () => withFilter(PREVIOUS),
    baseline: 'bare `bwrap … true`',
  },
];

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const samples = new Map(variants.map((v) => [v.name, []]));
for (let i = 0; i < 20; i++) for (const v of variants) await v.run();
for (let i = 0; i < cycles; i++) {
  for (let j = 0; j < variants.length; j++) {
    const v = variants[(i + j) % variants.length];
    const t0 = performance.now();
    await v.run();
    samples.get(v.name).push(performance.now() - t0);
  }
}
const p50 = new Map(
  [...samples].map(([k, s]) => [
    k,
    quantile(
      [...s].sort((a, b) => a - b),
      0.5,
    ),
  ]),
);

console.log(
  `## sandbox\n\n${cpus().length} cores, Node ${process.version}, load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}, ${cycles} cycles each, interleaved\n`,
);
console.log('| variant | p50 ms | p99 ms | vs baseline (p50) |\n|---|---|---|---|');
for (const v of variants) {
  const s = [...samples.get(v.name)].sort((a, b) => a - b);
  const ratio = v.baseline ? `${(p50.get(v.name) / p50.get(v.baseline)).toFixed(2)}× ${v.baseline}` : '—';
  console.log(`| ${v.name} | ${quantile(s, 0.5).toFixed(2)} | ${quantile(s, 0.99).toFixed(2)} | ${ratio} |`);
}
const overhead = p50.get('host, sandboxed (network none)') - p50.get('host, unsandboxed');
const floor = p50.get('bare `bwrap … true`') - p50.get('raw spawn `true`');
const layers = p50.get('bare `bwrap … true` + kernel layers (launcher)') - p50.get('bare `bwrap … true`');
console.log(
  `\nSandbox overhead per cycle: ${overhead.toFixed(2)} ms, of which bubblewrap's own start (bare floor) ${floor.toFixed(2)} ms and the kernel layers ${layers.toFixed(2)} ms.\n`,
);

// Proxy throughput.
const body = Buffer.alloc(1024 * 1024, 120);
// `/` at loopback speed; `/paced` at 50 MiB/s (1 MiB every 20 ms), a fast registry seen from the internet.
const server = createServer((req, res) => {
  const paced = req.url === '/paced';
  const total = paced ? Math.min(mib, 64) : mib;
  res.writeHead(200, { 'content-length': String(body.length * total) });
  let left = total;
  const pump = () => {
    while (left > 0) {
      left--;
      if (paced) {
        res.write(body);
        setTimeout(pump, 20);
        return;
      }
      if (!res.write(body)) return res.once('drain', pump);
    }
    res.end();
  };
  pump();
});
await new Promise((r) => server.listen(0, '0.0.0.0', r));
const { port } = server.address();
const proxied = await BubblewrapSandbox.start({
  network: { allow: ['127.0.0.2'], onRefused: () => {} },
  identity,
  runtimeDir: mkdtempSync(join(tmpdir(), 'tg-rt-')),
});
const proxyHost = new ProcessTerminalHost({
  cwd: workspace,
  gate: gate('proxy'),
  observer,
  spawner: proxied.spawner(new CrossSpawnProcessSpawner()),
});
async function download(host, extra = [], path = '/') {
  const id = await host.create({
    command: 'curl',
    args: ['-sS', ...extra, '-o', '/dev/null', '-w', '%{speed_download}', `http://127.0.0.2:${port}${path}`],
  });
  await host.waitForExit(id);
  const { output } = await host.output(id);
  await host.release(id);
  return Number(output) / (1024 * 1024);
}
const ways = [
  ['direct, unsandboxed', () => download(plainHost)],
  ['sandboxed: socat + the proxy, absolute-form HTTP', () => download(proxyHost)],
  ['sandboxed: socat + the proxy, CONNECT tunnel (as HTTPS)', () => download(proxyHost, ['--proxytunnel'])],
  ['paced 50 MiB/s, direct, unsandboxed', () => download(plainHost, [], '/paced')],
  ['paced 50 MiB/s, sandboxed: CONNECT tunnel', () => download(proxyHost, ['--proxytunnel'], '/paced')],
];
const speeds = new Map(ways.map(([name]) => [name, []]));
for (let i = 0; i < downloads; i++) {
  for (let j = 0; j < ways.length; j++) {
    const [name, run] = ways[(i + j) % ways.length];
    speeds.get(name).push(await run());
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  `| download (curl, ${downloads} runs each, interleaved; ${mib} MiB at loopback speed, 64 MiB paced) | median MiB/s | vs direct |\n|---|---|---|`,
);
for (const [name] of ways) {
  const m = median(speeds.get(name));
  const base = name.startsWith('paced') ? 'paced 50 MiB/s, direct, unsandboxed' : 'direct, unsandboxed';
  console.log(`| ${name} | ${m.toFixed(0)} | ${(m / median(speeds.get(base))).toFixed(2)}× |`);
}

await Promise.all([plainHost.closeAll(), sandboxHost.closeAll(), proxyHost.closeAll()]);
await none.close();
await noCgroups.close();
await proxied.close();
server.close();
rmSync(workspace, { recursive: true, force: true });
