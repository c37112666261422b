// termhost benchmark: host overhead per terminal and drain throughput, each
// side by side with a raw child_process baseline in the same run.
// Usage: npx tsc -b packages/termhost && node bench/termhost/run.mjs [cycles] [drainRuns]
// Prints a markdown report. Not a test: nothing is asserted.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { CrossSpawnProcessSpawner } from '../../packages/termhost/dist/adapters/index.js';
import { ProcessTerminalHost } from '../../packages/termhost/dist/index.js';
import { AllowAllGate, NoopTerminalObserver } from '../terminal-doubles.mjs';

const cycles = Number(process.argv[2] ?? 500);
const drainRuns = Number(process.argv[3] ?? 3);
const here = dirname(fileURLToPath(import.meta.url));
const SHELL = ['bash', '--noprofile', '--norc', '-c'];

// A plain-object environment, as the host passes: spawning with the default
// (the live process.env) would make the baseline pay for enumerating it.
const RAW_ENV = { ...process.env };

async function rawCycle(program, args) {
  const child = spawn(program, args, { env: RAW_ENV, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.resume();
  child.stderr.resume();
  await once(child, 'close');
}

const host = new ProcessTerminalHost({
  gate: new AllowAllGate(),
  observer: new NoopTerminalObserver(),
  spawner: new CrossSpawnProcessSpawner(),
});
async function hostCycle(spec) {
  const id = await host.create(spec);
  await host.waitForExit(id);
  await host.release(id);
}

const variants = [
  { name: 'raw spawn `true`', run: () => rawCycle('true', []) },
  {
    name: 'host argv `true`',
    run: () => hostCycle({ command: 'true', args: [] }),
    baseline: 'raw spawn `true`',
  },
  { name: 'raw spawn bash -c `true`', run: () => rawCycle(SHELL[0], [...SHELL.slice(1), 'true']) },
  {
    name: 'host line `true`',
    run: () => hostCycle({ command: 'true' }),
    baseline: 'raw spawn bash -c `true`',
  },
];

function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

const samples = new Map(variants.map((v) => [v.name, []]));
for (let i = 0; i < 30; i++) for (const v of variants) await v.run();
for (let i = 0; i < cycles; i++) {
  // Interleaved, with the order rotated each round, so drift hits every variant alike.
  for (let j = 0; j < variants.length; j++) {
    const v = variants[(i + j) % variants.length];
    const started = performance.now();
    await v.run();
    samples.get(v.name).push(performance.now() - started);
  }
}
await host.closeAll();

const stats = new Map();
for (const [name, list] of samples) {
  const sorted = [...list].sort((a, b) => a - b);
  stats.set(name, { median: quantile(sorted, 0.5), p99: quantile(sorted, 0.99) });
}

function drainOnce(variant) {
  const out = execFileSync(process.execPath, [join(here, 'drain-worker.mjs'), variant, String(1024 ** 3)], {
    encoding: 'utf8',
  });
  return JSON.parse(out);
}
const drains = { raw: [], host: [], 'host-digest': [] };
for (let i = 0; i < drainRuns; i++)
  for (const variant of Object.keys(drains)) drains[variant].push(drainOnce(variant));
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const drainStats = Object.fromEntries(
  Object.entries(drains).map(([variant, runs]) => [
    variant,
    {
      mbps: median(runs.map((r) => r.bytes / r.seconds / 1e6)),
      rssMedianMiB: median(runs.map((r) => r.rssGrowthBytes)) / 1024 / 1024,
      rssMaxMiB: Math.max(...runs.map((r) => r.rssGrowthBytes)) / 1024 / 1024,
    },
  ]),
);

const f = (n, digits = 2) => n.toFixed(digits);
const lines = [];
lines.push(
  `Node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), ` +
    `load average ${loadavg()[0].toFixed(1)} at the end, ${new Date().toISOString()}`,
);
lines.push('');
lines.push(`### Per terminal: create + waitForExit + release (${cycles} cycles each, interleaved)`);
lines.push('');
lines.push('| variant | median ms | p99 ms | median vs raw |');
lines.push('|---|---:|---:|---:|');
for (const v of variants) {
  const s = stats.get(v.name);
  const ratio = v.baseline ? `${f(s.median / stats.get(v.baseline).median)}×` : '1.00× (baseline)';
  lines.push(`| ${v.name} | ${f(s.median, 3)} | ${f(s.p99, 3)} | ${ratio} |`);
}
lines.push('');
lines.push(
  `### Draining \`head -c 1G /dev/zero\` through a 1 MiB tail (median of ${drainRuns} fresh processes)`,
);
lines.push('');
lines.push('| variant | MB/s | vs raw | peak RSS growth, median | max |');
lines.push('|---|---:|---:|---:|---:|');
const labels = {
  raw: 'raw pipe drain',
  host: 'host, digestOutput off',
  'host-digest': 'host, digestOutput on',
};
for (const [variant, s] of Object.entries(drainStats)) {
  const ratio = variant === 'raw' ? '1.00× (baseline)' : `${f(s.mbps / drainStats.raw.mbps)}×`;
  lines.push(
    `| ${labels[variant]} | ${f(s.mbps, 0)} | ${ratio} | ${f(s.rssMedianMiB, 1)} MiB | ${f(s.rssMaxMiB, 1)} MiB |`,
  );
}
process.stdout.write(`${lines.join('\n')}\n`);
