#!/usr/bin/env node
/**
 * Cold start of `termgate serve`, one or more builds side by side,
 * interleaved: spawn `node BIN serve`, write a `server/discover` and a
 * `terminal_create` of `true` (`waitSeconds: 0`) at once, and time, from the
 * spawn, the discover's answer and the create's (the create waits for the
 * policy gate: the judge's worker, the trail, the sandbox). Each process runs
 * the shipped default policy with an audit file of its own, and is closed
 * and awaited before the next run.
 *
 *   npx tsc -b && node scripts/bundle-cli.mjs
 *   node bench/mcp/cold-start.mjs [--runs 20] [--bin LABEL=PATH]...
 *
 * Without `--bin`: the bundle (`packages/cli/dist/bin.js`) against the
 * unbundled entry tsc writes (`packages/cli/dist/main.js`), the two ways the
 * same build can start. Prints Markdown on stdout. Not a test: no pass/fail.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'termgate-bench', version: '0.0.0' },
};

function runsOption() {
  const index = process.argv.indexOf('--runs');
  if (index === -1) return 20;
  const value = Number(process.argv[index + 1]);
  if (!Number.isInteger(value) || value <= 0) throw new Error('--runs needs a positive integer');
  return value;
}

function binsOption() {
  const bins = [];
  process.argv.forEach((arg, index) => {
    if (arg !== '--bin') return;
    const spec = process.argv[index + 1] ?? '';
    const equals = spec.indexOf('=');
    if (equals <= 0) throw new Error('--bin takes LABEL=PATH');
    bins.push({ label: spec.slice(0, equals), bin: path.resolve(spec.slice(equals + 1)) });
  });
  if (bins.length > 0) return bins;
  return [
    { label: 'bundled (dist/bin.js)', bin: path.join(REPO_ROOT, 'packages/cli/dist/bin.js') },
    { label: 'unbundled (dist/main.js)', bin: path.join(REPO_ROOT, 'packages/cli/dist/main.js') },
  ];
}

const AUDIT_DIR = mkdtempSync(path.join(tmpdir(), 'termgate-cold-start-'));
let auditFiles = 0;

/**
 * CPU time (user + system, ms) the process's main thread has used so far,
 * from /proc (Linux; 10 ms ticks): the work on the thread that answers,
 * without the policy side's worker threads starting beside it, and a figure
 * that depends far less on what else the machine runs than the wall clock.
 */
function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** One cold start: ms from the spawn to the discover's answer and to the create's, and the CPU used until then. */
function coldStart(bin) {
  auditFiles += 1;
  const audit = path.join(AUDIT_DIR, `audit-${auditFiles}.jsonl`);
  const startedAt = process.hrtime.bigint();
  const child = spawn(process.execPath, [bin, 'serve', '--audit', audit], {
    cwd: REPO_ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const send = (id, method, params) =>
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
  send(1, 'server/discover', { _meta: META });
  send(2, 'tools/call', {
    name: 'terminal_create',
    arguments: { command: 'true', args: [], waitSeconds: 0 },
    _meta: META,
  });
  return new Promise((resolve, reject) => {
    const at = {};
    const cpu = {};
    let buffer = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      buffer += chunk;
      for (let newline = buffer.indexOf('\n'); newline !== -1; newline = buffer.indexOf('\n')) {
        const message = JSON.parse(buffer.slice(0, newline));
        buffer = buffer.slice(newline + 1);
        if (message.id === 1 || message.id === 2) {
          at[message.id] = Number(process.hrtime.bigint() - startedAt) / 1e6;
          cpu[message.id] = cpuMs(child.pid);
          const failed = message.error !== undefined || message.result?.isError === true;
          if (failed) reject(new Error(`${bin}: ${JSON.stringify(message)}\n${stderr}`));
        }
        if (at[1] !== undefined && at[2] !== undefined) child.stdin.end();
      }
    });
    child.on('exit', () => {
      if (at[1] === undefined || at[2] === undefined) reject(new Error(`${bin} exited early:\n${stderr}`));
      else resolve({ discover: at[1], create: at[2], discoverCpu: cpu[1], createCpu: cpu[2] });
    });
  });
}

function stats(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
  return { median: at(0.5), p90: at(0.9), min: sorted[0] };
}

const runs = runsOption();
const bins = binsOption();
const samples = bins.map(() => ({ discover: [], create: [], discoverCpu: [], createCpu: [] }));
const loadAtStart = loadavg()[0];
try {
  for (const { bin } of bins) await coldStart(bin); // warm the file-system cache for every build
  for (let run = 0; run < runs; run++) {
    // Rotate the order so that drift hits every build alike.
    for (let k = 0; k < bins.length; k++) {
      const index = (run + k) % bins.length;
      const measured = await coldStart(bins[index].bin);
      for (const key of Object.keys(samples[index])) samples[index][key].push(measured[key]);
    }
  }
} finally {
  rmSync(AUDIT_DIR, { recursive: true, force: true });
}

const fmt = (value) => value.toFixed(1);
const out = (text = '') => process.stdout.write(`${text}\n`);
out(
  `Run ${new Date().toISOString()} on ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version};`,
);
out(
  `${runs} runs per build, interleaved; load average ${loadAtStart.toFixed(2)} at start, ${loadavg()[0].toFixed(2)} at the end.`,
);
out();
out("Wall clock from the spawn, and the server's main-thread CPU time (user + system) until the answer:");
out();
out(
  '| build | discover median ms | p90 | min | CPU median ms | first `terminal_create` median ms | p90 | min | CPU median ms |',
);
out('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
bins.forEach(({ label }, index) => {
  const [discover, create, discoverCpu, createCpu] = ['discover', 'create', 'discoverCpu', 'createCpu'].map(
    (key) => stats(samples[index][key]),
  );
  out(
    `| ${label} | ${fmt(discover.median)} | ${fmt(discover.p90)} | ${fmt(discover.min)} | ${fmt(discoverCpu.median)} | ${fmt(create.median)} | ${fmt(create.p90)} | ${fmt(create.min)} | ${fmt(createCpu.median)} |`,
  );
});
