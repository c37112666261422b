#!/usr/bin/env node
/**
 * MCP benchmark: `termgate serve` against a minimal stdio server on
 * `@modelcontextprotocol/server@2.4.0` (bench/mcp/sdk-baseline-server.mjs),
 * side by side in one run, interleaved so drift hits both equally.
 *
 *   npx -y pnpm@12.4.2 run build && node bench/mcp/run.mjs [--runs N] [--calls N] [--warmup N] [--profile]
 *
 * (a) cold start: spawn the server, write a modern `server/discover` at once,
 *     time until its answer line arrives (spawn → answer, wall clock).
 * (b) tool-call latency on a warm process, modern era, raw JSON lines (no
 *     client SDK on our side of the pipe), all interleaved in one loop:
 *     termgate's one-call path (`terminal_create` of `true`, which waits for
 *     the exit and returns status and output; never released, so the
 *     default policy's 16 slots are reclaimed as an agent would leave them),
 *     the older create-then-wait pair (`waitSeconds: 0`, then
 *     `terminal_wait_for_exit`), and the baseline's single `terminal_run`.
 * --profile additionally runs each server once under `node --cpu-prof` and
 *     prints where startup self-time goes, grouped by package, and counts the
 *     ES modules each loads (bench/mcp/module-count-hooks.mjs).
 *
 * Prints a Markdown report on stdout (paste it under `## mcp` in
 * docs/BENCHMARKS.md). Not a test: no pass/fail.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const TERMGATE_BIN = path.join(REPO_ROOT, 'packages/cli/dist/bin.js');
const BASELINE = path.join(REPO_ROOT, 'bench/mcp/sdk-baseline-server.mjs');
const PROFILE_DIR = path.join(REPO_ROOT, 'bench/mcp/.bench-out');

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'termgate-bench', version: '0.0.0' },
};

// Every termgate process gets its own audit file (the default is the user's
// ~/.local/state/termgate/audit.jsonl, and an audit file takes one writer).
const AUDIT_DIR = mkdtempSync(path.join(tmpdir(), 'termgate-bench-audit-'));
let auditFiles = 0;

const SERVERS = {
  termgate: {
    label: 'termgate serve',
    get args() {
      auditFiles += 1;
      return [TERMGATE_BIN, 'serve', '--audit', path.join(AUDIT_DIR, `audit-${auditFiles}.jsonl`)];
    },
  },
  baseline: { label: 'SDK 2.4.0 baseline', args: [BASELINE] },
};

function option(name, fallback) {
  const index = process.argv.indexOf(`--${name}`);
  if (index === -1) return fallback;
  const value = Number(process.argv[index + 1]);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} needs a positive integer`);
  return value;
}

const START_RUNS = option('runs', 30);
const CALLS = option('calls', 300);
const WARMUP = option('warmup', 30);
const PROFILE = process.argv.includes('--profile');

function out(text = '') {
  process.stdout.write(`${text}\n`);
}

/** A server process spoken to in JSON lines; `request` resolves with the parsed answer. */
class LineClient {
  constructor(nodeArgs, extraNodeFlags = []) {
    this.startedAt = process.hrtime.bigint();
    this.child = spawn(process.execPath, [...extraNodeFlags, ...nodeArgs], {
      cwd: REPO_ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.pending = new Map();
    this.buffer = '';
    this.nextId = 1;
    this.stderr = '';
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (chunk) => {
      this.stderr = (this.stderr + chunk).slice(-4000);
    });
    this.child.stdin.on('error', () => undefined);
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (chunk) => {
      this.buffer += chunk;
      let newline = this.buffer.indexOf('\n');
      while (newline !== -1) {
        const line = this.buffer.slice(0, newline);
        this.buffer = this.buffer.slice(newline + 1);
        newline = this.buffer.indexOf('\n');
        const at = process.hrtime.bigint();
        const message = JSON.parse(line);
        const waiter = message.id === undefined ? undefined : this.pending.get(message.id);
        if (waiter !== undefined && message.method === undefined) {
          this.pending.delete(message.id);
          waiter.resolve({ message, at });
        }
      }
    });
    this.exited = new Promise((resolve) =>
      this.child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    this.exited.then(() => {
      for (const waiter of this.pending.values()) {
        waiter.reject(new Error(`server exited while waiting; stderr:\n${this.stderr}`));
      }
      this.pending.clear();
    });
  }

  /** Sends a request; resolves `{message, at}` where `at` is the hrtime of the answer line. */
  request(method, params) {
    const id = this.nextId++;
    const answer = new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    return answer;
  }

  async callTool(name, args) {
    const { message } = await this.request('tools/call', { name, arguments: args, _meta: META });
    if (message.error !== undefined || message.result?.isError === true) {
      throw new Error(`${name} failed: ${JSON.stringify(message)}`);
    }
    return message.result.structuredContent;
  }

  async close() {
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await this.exited;
    clearTimeout(timer);
  }
}

const ms = (nanoseconds) => Number(nanoseconds) / 1e6;

function quantile(sorted, q) {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[index];
}

function stats(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    n: sorted.length,
    median: quantile(sorted, 0.5),
    p90: quantile(sorted, 0.9),
    p99: quantile(sorted, 0.99),
    min: sorted[0],
  };
}

const fmt = (value) => (Number.isFinite(value) ? value.toFixed(2) : 'n/a');
const ratio = (ours, theirs) => `${(ours / theirs).toFixed(2)}×`;

/** Spawn → first `server/discover` answer, in ms. */
async function coldStart(kind) {
  const client = new LineClient(SERVERS[kind].args);
  const { message, at } = await client.request('server/discover', { _meta: META });
  const elapsed = ms(at - client.startedAt);
  if (message.result?.resultType !== 'complete')
    throw new Error(`${kind} discover failed: ${JSON.stringify(message)}`);
  await client.close();
  return elapsed;
}

async function measureColdStart() {
  const samples = { termgate: [], baseline: [] };
  await coldStart('termgate'); // warm the file-system cache for both
  await coldStart('baseline');
  for (let run = 0; run < START_RUNS; run++) {
    const order = run % 2 === 0 ? ['termgate', 'baseline'] : ['baseline', 'termgate'];
    for (const kind of order) samples[kind].push(await coldStart(kind));
  }
  return { termgate: stats(samples.termgate), baseline: stats(samples.baseline) };
}

async function termgateOneCall(client) {
  const t0 = process.hrtime.bigint();
  const result = await client.callTool('terminal_create', { command: 'true', args: [] });
  const t1 = process.hrtime.bigint();
  if (result.exitCode !== 0 || result.running !== false) throw new Error(`true: ${JSON.stringify(result)}`);
  return ms(t1 - t0);
}

async function termgatePair(client) {
  const t0 = process.hrtime.bigint();
  const { terminalId } = await client.callTool('terminal_create', {
    command: 'true',
    args: [],
    waitSeconds: 0,
  });
  const t1 = process.hrtime.bigint();
  const waited = await client.callTool('terminal_wait_for_exit', { terminalId });
  const t2 = process.hrtime.bigint();
  if (waited.exitCode !== 0) throw new Error(`true exited with ${JSON.stringify(waited)}`);
  // Not timed: keep the server's terminal table small, as a real agent would.
  await client.callTool('terminal_release', { terminalId });
  return { create: ms(t1 - t0), wait: ms(t2 - t1), pair: ms(t2 - t0) };
}

async function baselineCall(client) {
  const t0 = process.hrtime.bigint();
  const result = await client.callTool('terminal_run', { command: 'true', args: [] });
  const t1 = process.hrtime.bigint();
  if (result.exitCode !== 0) throw new Error(`true exited with ${JSON.stringify(result)}`);
  return ms(t1 - t0);
}

async function measureCalls() {
  const termgate = new LineClient(SERVERS.termgate.args);
  const baseline = new LineClient(SERVERS.baseline.args);
  await termgate.request('server/discover', { _meta: META });
  await baseline.request('server/discover', { _meta: META });
  const samples = { oneCall: [], create: [], wait: [], pair: [], baseline: [] };
  const steps = [
    async () => samples.oneCall.push(await termgateOneCall(termgate)),
    async () => {
      const pair = await termgatePair(termgate);
      samples.create.push(pair.create);
      samples.wait.push(pair.wait);
      samples.pair.push(pair.pair);
    },
    async () => samples.baseline.push(await baselineCall(baseline)),
  ];
  try {
    for (let i = 0; i < WARMUP; i++) for (const step of steps) await step();
    for (const key of Object.keys(samples)) samples[key].length = 0;
    for (let i = 0; i < CALLS; i++) {
      // Rotate the order so that drift and any after-effect of one kind hit every kind equally.
      for (let j = 0; j < steps.length; j++) await steps[(i + j) % steps.length]();
    }
  } finally {
    await termgate.close();
    await baseline.close();
  }
  return Object.fromEntries(Object.entries(samples).map(([key, values]) => [key, stats(values)]));
}

/** Self time (ms) per package from one `--cpu-prof` startup of each server. */
async function profileStartup(kind) {
  const dir = path.join(PROFILE_DIR, kind);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const client = new LineClient(SERVERS[kind].args, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
  await client.request('server/discover', { _meta: META });
  await client.close();
  const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
  if (file === undefined) return [];
  const profile = JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
  const byNode = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfMs = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byNode.get(profile.samples[i]);
    const delta = (profile.timeDeltas[i] ?? 0) / 1000;
    const group = groupOf(node?.callFrame?.url ?? '', node?.callFrame?.functionName ?? '');
    selfMs.set(group, (selfMs.get(group) ?? 0) + delta);
  }
  return [...selfMs.entries()].sort((a, b) => b[1] - a[1]).slice(0, 10);
}

/** ES modules loaded up to the first discover answer, counted per package (loader hooks add overhead: no timing here). */
async function countModules(kind) {
  mkdirSync(PROFILE_DIR, { recursive: true });
  const log = path.join(PROFILE_DIR, `${kind}-modules.txt`);
  rmSync(log, { force: true });
  const hooks = pathToFileURL(path.join(REPO_ROOT, 'bench/mcp/module-count-hooks.mjs')).href;
  const register = `data:text/javascript,import{register}from"node:module";register(${JSON.stringify(hooks)});`;
  process.env.TERMGATE_BENCH_MODULE_LOG = log;
  try {
    const client = new LineClient(SERVERS[kind].args, ['--import', register]);
    await client.request('server/discover', { _meta: META });
    await client.close();
  } finally {
    delete process.env.TERMGATE_BENCH_MODULE_LOG;
  }
  const urls = existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
  const perGroup = new Map();
  for (const url of urls) {
    if (url.startsWith('data:')) continue;
    const group = groupOf(url, '');
    perGroup.set(group, (perGroup.get(group) ?? 0) + 1);
  }
  return { total: urls.length, top: [...perGroup.entries()].sort((a, b) => b[1] - a[1]).slice(0, 8) };
}

function groupOf(url, functionName) {
  if (url === '') return functionName === '(idle)' ? '(idle)' : `(native: ${functionName || 'anonymous'})`;
  if (url.startsWith('node:')) return 'node: core';
  const file = url.replace(/^file:\/\//, '');
  const pnpm = file.match(/node_modules\/\.pnpm\/[^/]+\/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (pnpm) return pnpm[1];
  const plain = file.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (plain) return plain[1];
  const ours = file.match(/packages\/([^/]+)\//);
  if (ours) return `@termgate/${ours[1]}`;
  return path.relative(REPO_ROOT, file);
}

async function main() {
  if (!existsSync(TERMGATE_BIN)) throw new Error(`${TERMGATE_BIN} is missing: run \`npx tsc -b\` first`);
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  out(
    `Run ${new Date().toISOString()} on ${cpus().length} × ${cpu}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB,`,
  );
  out(
    `Node ${process.version}, ${process.platform}/${process.arch}; load average at start ${loadavg()[0].toFixed(2)}.`,
  );
  out('termgate runs with its default policy and an audit file per process (both on the measured path).');
  out(
    `Reproduce: \`npx -y pnpm@12.4.2 run build && node bench/mcp/run.mjs\` (runs=${START_RUNS}, calls=${CALLS}, warmup=${WARMUP}).`,
  );
  out();

  const start = await measureColdStart();
  out(`### Cold start to the first \`server/discover\` answer (ms, ${START_RUNS} runs each, interleaved)`);
  out();
  out('| server | median | p90 | min |');
  out('|---|---:|---:|---:|');
  for (const kind of ['termgate', 'baseline']) {
    const s = start[kind];
    out(`| ${SERVERS[kind].label} | ${fmt(s.median)} | ${fmt(s.p90)} | ${fmt(s.min)} |`);
  }
  out(
    `| **ratio termgate / baseline** | **${ratio(start.termgate.median, start.baseline.median)}** | ${ratio(start.termgate.p90, start.baseline.p90)} | ${ratio(start.termgate.min, start.baseline.min)} |`,
  );
  out();

  const calls = await measureCalls();
  out(
    `### \`tools/call\` round trip on a warm process (ms, ${CALLS} iterations after ${WARMUP} warm-up, interleaved)`,
  );
  out();
  out('| measurement | median | p90 | p99 | median vs baseline |');
  out('|---|---:|---:|---:|---:|');
  const rows = [
    ['**termgate one call: `terminal_create` of `true` (waits, returns status and output)**', calls.oneCall],
    ['termgate `terminal_create` with `waitSeconds: 0`', calls.create],
    ['termgate `terminal_wait_for_exit` after it', calls.wait],
    ['termgate create + wait (the older pair)', calls.pair],
    ['baseline `terminal_run` (`true`)', calls.baseline],
  ];
  for (const [label, s] of rows) {
    out(
      `| ${label} | ${fmt(s.median)} | ${fmt(s.p90)} | ${fmt(s.p99)} | ${ratio(s.median, calls.baseline.median)} |`,
    );
  }
  out();
  out(
    `One call / baseline: median ${ratio(calls.oneCall.median, calls.baseline.median)}, p99 ${ratio(calls.oneCall.p99, calls.baseline.p99)}. Pair / baseline: median ${ratio(calls.pair.median, calls.baseline.median)}.`,
  );
  out();

  out(
    `Load average at the end: ${loadavg()[0].toFixed(2)} (2 cores: above ~1.5 the figures are inflated by other work).`,
  );
  out();

  if (PROFILE) {
    out('### Startup self-time by package (one `node --cpu-prof` run each, ms)');
    out();
    for (const kind of ['termgate', 'baseline']) {
      const top = await profileStartup(kind);
      out(`- ${SERVERS[kind].label}: ${top.map(([group, t]) => `${group} ${t.toFixed(1)}`).join(', ')}`);
    }
    out();
    out('### ES modules loaded before the first answer');
    out();
    for (const kind of ['termgate', 'baseline']) {
      const { total, top } = await countModules(kind);
      out(
        `- ${SERVERS[kind].label}: ${total} modules; ${top.map(([group, n]) => `${group} ${n}`).join(', ')}`,
      );
    }
    out();
  }
}

main()
  .catch((error) => {
    process.stderr.write(`${error.stack ?? error}\n`);
    process.exitCode = 1;
  })
  .finally(() => rmSync(AUDIT_DIR, { recursive: true, force: true }));
