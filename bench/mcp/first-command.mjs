#!/usr/bin/env node
/**
 * First command after start, warm one-call latency and whole-tree RSS:
 * termgate against the SDK 2.4.0 baseline server (bench/mcp/sdk-baseline-server.mjs)
 * and two peers from npm, side by side in one run, interleaved.
 *
 *   mkdir -p /tmp/peers && (cd /tmp/peers && npm init -y >/dev/null && \
 *     npm install --ignore-scripts mcp-server-commands@0.5.0 @wonderwhy-er/desktop-commander@0.2.52)
 *   npx -y pnpm@12.4.2 run build && node bench/mcp/first-command.mjs --peers /tmp/peers [--runs 5] [--calls 30] [--warmup 20]
 *
 * Every server gets the same client: raw JSON lines, the 2025 `initialize`
 * handshake (the peers speak only that era), then one tool call that runs
 * `echo hi` and returns its output (the SDK baseline's `terminal_run`
 * returns only the exit status: it is a lower bound). Per run:
 * - start → handshake answered, and the first `echo hi` call (the figure
 *   the issue names: "the first command after start");
 * - peak RSS of the server's whole process tree (the server and every
 *   descendant, summed from /proc every 5 ms) over start, handshake and the
 *   warm calls;
 * - after the first call and `--warmup` untimed ones, `--calls` more
 *   `echo hi` calls: median and p90.
 * Servers run with HOME in a scratch directory (Desktop Commander writes its
 * config there). Prints Markdown on stdout. Not a test: no pass/fail.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function option(name, fallback) {
  const index = process.argv.indexOf(`--${name}`);
  return index === -1 ? fallback : process.argv[index + 1];
}

const PEERS = option('peers', undefined);
const RUNS = Number(option('runs', 5));
const CALLS = Number(option('calls', 30));
/** Untimed calls between the first call and the timed warm ones (JIT, lazily compiled schemas, a worker's first parses). */
const WARMUP = Number(option('warmup', 20));
const SCRATCH = mkdtempSync(path.join(tmpdir(), 'termgate-first-command-'));
let audits = 0;

const SERVERS = [
  {
    label: 'termgate serve (one call: `terminal_create`)',
    args: () => [
      path.join(REPO_ROOT, 'packages/cli/dist/bin.js'),
      'serve',
      '--audit',
      path.join(SCRATCH, `audit-${++audits}.jsonl`),
    ],
    call: { name: 'terminal_create', arguments: { command: 'echo hi' } },
    ok: (result) => result.structuredContent?.output === 'hi\n',
  },
  {
    label: 'SDK 2.4.0 baseline (`terminal_run`, exit status only)',
    args: () => [path.join(REPO_ROOT, 'bench/mcp/sdk-baseline-server.mjs')],
    call: { name: 'terminal_run', arguments: { command: 'echo', args: ['hi'] } },
    ok: (result) => result.structuredContent?.exitCode === 0,
  },
];
if (PEERS !== undefined) {
  SERVERS.push(
    {
      label: 'mcp-server-commands 0.5.0 (`run_command`)',
      args: () => [path.join(PEERS, 'node_modules/mcp-server-commands/build/index.js')],
      call: { name: 'run_command', arguments: { command: 'echo hi' } },
      ok: (result) => JSON.stringify(result.content).includes('hi'),
    },
    {
      label: 'Desktop Commander 0.2.52 (`start_process`)',
      args: () => [path.join(PEERS, 'node_modules/@wonderwhy-er/desktop-commander/dist/index.js')],
      call: { name: 'start_process', arguments: { command: 'echo hi', timeout_ms: 5000 } },
      ok: (result) => JSON.stringify(result.content).includes('hi'),
    },
  );
}

/** Resident set size of `pid` and all its descendants, in bytes (0 once gone). */
function treeRss(pid) {
  const children = new Map();
  const rss = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ppid = Number(fields[1]);
      rss.set(Number(entry), Number(fields[21]) * 4096);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  let total = 0;
  const stack = [pid];
  while (stack.length > 0) {
    const current = stack.pop();
    total += rss.get(current) ?? 0;
    stack.push(...(children.get(current) ?? []));
  }
  return total;
}

class LineClient {
  constructor(args) {
    this.startedAt = performance.now();
    this.child = spawn(process.execPath, args, {
      cwd: REPO_ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, HOME: SCRATCH },
    });
    this.child.stderr.resume();
    this.pending = new Map();
    this.nextId = 1;
    this.buffer = '';
    this.peakRss = 0;
    this.sampler = setInterval(() => {
      this.peakRss = Math.max(this.peakRss, treeRss(this.child.pid));
    }, 5);
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (chunk) => {
      this.buffer += chunk;
      for (let nl = this.buffer.indexOf('\n'); nl !== -1; nl = this.buffer.indexOf('\n')) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        let message;
        try {
          message = JSON.parse(line);
        } catch {
          continue;
        }
        const waiter = this.pending.get(message.id);
        if (waiter && message.method === undefined) {
          this.pending.delete(message.id);
          waiter(message);
        }
      }
    });
  }

  request(method, params) {
    const id = this.nextId++;
    const answer = new Promise((resolve) => this.pending.set(id, resolve));
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    return answer;
  }

  notify(method) {
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method })}\n`);
  }

  async close() {
    this.peakRss = Math.max(this.peakRss, treeRss(this.child.pid));
    clearInterval(this.sampler);
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await new Promise((resolve) => this.child.once('exit', resolve));
    clearTimeout(timer);
  }
}

async function measure(server) {
  const client = new LineClient(server.args());
  await client.request('initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'termgate-bench', version: '0.0.0' },
  });
  client.notify('notifications/initialized');
  const handshake = performance.now() - client.startedAt;
  const callAt = performance.now();
  const first = await client.request('tools/call', server.call);
  const firstCall = performance.now() - callAt;
  if (!server.ok(first.result ?? {}))
    throw new Error(`${server.label}: ${JSON.stringify(first).slice(0, 400)}`);
  const warm = [];
  for (let i = -WARMUP; i < CALLS; i++) {
    const t0 = performance.now();
    const answer = await client.request('tools/call', server.call);
    if (i >= 0) warm.push(performance.now() - t0);
    if (!server.ok(answer.result ?? {}))
      throw new Error(`${server.label}: ${JSON.stringify(answer).slice(0, 400)}`);
  }
  await client.close();
  return { handshake, firstCall, total: handshake + firstCall, warm, peakRss: client.peakRss };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.ceil(values.length / 2) - 1];
const p90 = (values) => [...values].sort((a, b) => a - b)[Math.ceil(values.length * 0.9) - 1];

async function main() {
  const results = SERVERS.map(() => ({ handshake: [], firstCall: [], total: [], warm: [], peakRss: [] }));
  for (const server of SERVERS) await measure(server); // warm the file-system cache
  for (let run = 0; run < RUNS; run++) {
    for (let k = 0; k < SERVERS.length; k++) {
      const index = (run + k) % SERVERS.length;
      const measured = await measure(SERVERS[index]);
      const into = results[index];
      into.handshake.push(measured.handshake);
      into.firstCall.push(measured.firstCall);
      into.total.push(measured.total);
      into.warm.push(...measured.warm);
      into.peakRss.push(measured.peakRss);
    }
  }
  const out = (text = '') => process.stdout.write(`${text}\n`);
  out(
    `Run ${new Date().toISOString()} on ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, Node ${process.version}; load average ${loadavg()[0].toFixed(2)}; ${RUNS} runs per server, ${CALLS} warm calls each after ${WARMUP} untimed.`,
  );
  out();
  out(
    '| server | start → handshake ms | first `echo hi` call ms | start → first output ms | warm call median ms | warm p90 ms | peak tree RSS MB |',
  );
  out('|---|---:|---:|---:|---:|---:|---:|');
  SERVERS.forEach((server, i) => {
    const r = results[i];
    out(
      `| ${server.label} | ${median(r.handshake).toFixed(1)} | ${median(r.firstCall).toFixed(1)} | ${median(r.total).toFixed(1)} | ${median(r.warm).toFixed(2)} | ${p90(r.warm).toFixed(2)} | ${(median(r.peakRss) / 1e6).toFixed(1)} |`,
    );
  });
  out();
  const ours = results[0];
  const sdk = results[1];
  out(
    `termgate / SDK baseline: first command after start ${(median(ours.total) / median(sdk.total)).toFixed(2)}×, peak tree RSS ${(median(ours.peakRss) / median(sdk.peakRss)).toFixed(2)}×.`,
  );
  if (SERVERS.length > 2) {
    const fastest = Math.min(...results.slice(2).map((r) => median(r.warm)));
    out(`termgate warm one-call \`echo hi\` / fastest peer: ${(median(ours.warm) / fastest).toFixed(2)}×.`);
  }
}

main()
  .catch((error) => {
    process.stderr.write(`${error.stack ?? error}\n`);
    process.exitCode = 1;
  })
  .finally(() => rmSync(SCRATCH, { recursive: true, force: true }));
