// The confinement tiers side by side in one run (interleaved, order rotated):
// create + wait + release of `true` through ProcessTerminalHost,
//  - unconfined (a plain spawn),
//  - the namespaces tier (bubblewrap: nsenter into the shared namespace, bwrap),
//  - the landlock tier (the Perl launcher, then the Landlock launcher: rules
//    from the profile, no_new_privs, the syscall filter),
// each with network none and the same workspace writable; as root, commands
// run as the sandbox user in both tiers, as `serve` does.
// Usage: npx tsc -b && node bench/sandbox/tiers.mjs [cycles]
// Prints a markdown report. Not a test: nothing is asserted.

import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { CrossSpawnProcessSpawner } from '../../packages/termhost/dist/adapters/index.js';
import { ProcessTerminalHost } from '../../packages/termhost/dist/index.js';
import {
  BubblewrapSandbox,
  grantSandboxAccess,
  LandlockSandbox,
  resolveSandboxIdentity,
} from '../../packages/termhost/dist/sandbox/index.js';
import { AllowAllGate, NoopTerminalObserver } from '../terminal-doubles.mjs';

const cycles = Number(process.argv[2] ?? 300);
// Outside /tmp: the landlock tier keeps the host's /tmp unreadable.
const workspace = mkdtempSync(join('/var/tmp', 'termgate-bench-tiers-'));
const profile = {
  filesystem: { writable: [workspace], readOnly: [], hiddenDirectories: [], hiddenFiles: [], tmp: '/tmp' },
  network: 'none',
};
const gate = { decide: () => ({ allow: true, sandbox: profile }) };
const identity = process.getuid() === 0 ? resolveSandboxIdentity('termgate-sandbox') : null;
if (identity !== null) grantSandboxAccess(identity, [workspace], []);

const runtime = () => mkdtempSync(join(tmpdir(), 'tg-tiers-'));
const namespaces = await BubblewrapSandbox.start({ network: 'none', identity, runtimeDir: runtime() });
const landlockRuntime = runtime();
const privateTmp = join(landlockRuntime, 'tmp');
(await import('node:fs')).mkdirSync(privateTmp, { mode: 0o700 });
if (identity !== null) grantSandboxAccess(identity, [], [join(landlockRuntime, 'x')]);
const landlock = await LandlockSandbox.start({
  network: 'none',
  identity,
  runtimeDir: landlockRuntime,
  privateTmp,
});

const observer = new NoopTerminalObserver();
const host = (spawner, g = gate) => new ProcessTerminalHost({ cwd: workspace, gate: g, observer, spawner });
const variants = [
  { name: 'unconfined spawn', host: host(new CrossSpawnProcessSpawner(), new AllowAllGate()) },
  { name: 'namespaces tier (bubblewrap)', host: host(namespaces.spawner(new CrossSpawnProcessSpawner())) },
  {
    name: 'landlock tier (Landlock + seccomp)',
    host: host(landlock.spawner(new CrossSpawnProcessSpawner())),
  },
];

async function cycle(h) {
  const id = await h.create({ command: 'true', args: [] });
  const exit = await h.waitForExit(id);
  await h.release(id);
  return exit;
}

// Each chain must run `true` to its end (exit 0) before it is timed.
for (const v of variants) {
  const exit = await cycle(v.host);
  if (exit.exitCode !== 0) throw new Error(`${v.name}: \`true\` failed: ${JSON.stringify(exit)}`);
  for (let i = 0; i < 10; i++) await cycle(v.host);
}
const samples = new Map(variants.map((v) => [v.name, []]));
for (let i = 0; i < cycles; i++) {
  for (let k = 0; k < variants.length; k++) {
    const v = variants[(i + k) % variants.length];
    const t0 = performance.now();
    await cycle(v.host);
    samples.get(v.name).push(performance.now() - t0);
  }
}
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const p50 = new Map(
  [...samples].map(([name, s]) => [
    name,
    quantile(
      [...s].sort((a, b) => a - b),
      0.5,
    ),
  ]),
);
console.log(
  `cycles ${cycles} per variant, interleaved; ${cpus().length} cores, load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}; ${identity === null ? 'as this user' : 'as root, commands as termgate-sandbox'}\n`,
);
console.log(
  '| variant | p50 ms | p99 ms | vs unconfined (p50) | vs namespaces (p50) |\n|---|---|---|---|---|',
);
for (const v of variants) {
  const s = [...samples.get(v.name)].sort((a, b) => a - b);
  const r = (base) => `${(p50.get(v.name) / p50.get(base)).toFixed(2)}×`;
  console.log(
    `| ${v.name} | ${quantile(s, 0.5).toFixed(2)} | ${quantile(s, 0.99).toFixed(2)} | ${r('unconfined spawn')} | ${r('namespaces tier (bubblewrap)')} |`,
  );
}
await namespaces.close();
await landlock.close();
rmSync(workspace, { recursive: true, force: true });
