#!/usr/bin/env node
/**
 * Issue #22's side-by-side run: the first command after `tools/list`, warm
 * `echo hi` and whole-tree RSS, termgate (sandboxed with the shipped default
 * policy, and unsandboxed) against the peers, interleaved in one run.
 *
 *   npx tsc -b && node scripts/bundle-cli.mjs
 *   node bench/mcp/first-command.mjs [--runs 5] [--calls 30] [--warmup 20] \
 *     [--before /path/to/other/checkout/packages/cli/dist/bin.js] [--srt-node /path/to/node-24]
 *
 * The peers are installed by the bench (npm, pinned, into the ignored
 * .bench-out/peers; `--peers DIR` to reuse another): mcp-server-commands
 * 0.5.0 (no confinement), @openai/codex-shell-tool-mcp 0.97.0 (Landlock +
 * seccomp through the `codex-linux-sandbox` of @openai/codex 0.97.0, set by
 * Codex's `codex/sandbox-state/update` request), and the MCP SDK server of
 * bench/mcp/srt-reference-server.mjs wrapping each command in
 * @anthropic-ai/sandbox-runtime 0.0.83 (needs Node ≥ 22.12: `--srt-node`,
 * and ripgrep on PATH). `--before` adds another termgate build (say, main's)
 * to the same run. All on loopback; no network is used after the install.
 *
 * Every server gets the same client: raw JSON lines, the 2025 `initialize`
 * handshake (the peers speak only that era), `tools/list`, then one tool
 * call that runs `echo hi` and returns its output. Per run:
 * - start → `tools/list` answered, then the first `echo hi` call (the
 *   figure #22 names: "first command after `tools/list`");
 * - peak RSS of the server's whole process tree (the server and every
 *   descendant, summed from /proc every 5 ms) over the whole run, and the
 *   tree's RSS settled, 0.5 s after the last call;
 * - after the first call and `--warmup` untimed ones, `--calls` more
 *   `echo hi` calls: median and p90.
 * Servers run with HOME in a scratch directory, cwd a scratch workspace.
 * Prints Markdown on stdout. Not a test: no pass/fail.
 */
import { execFileSync, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function option(name, fallback) {
  const index = process.argv.indexOf(`--${name}`);
  return index === -1 ? fallback : process.argv[index + 1];
}

const PEERS = path.resolve(option('peers', path.join(REPO_ROOT, '.bench-out', 'peers')));
const RUNS = Number(option('runs', 5));
const CALLS = Number(option('calls', 30));
/** Untimed calls between the first call and the timed warm ones (JIT, lazily compiled schemas, a worker's first parses). */
const WARMUP = Number(option('warmup', 20));
const BEFORE = option('before', undefined);
const SRT_NODE = option('srt-node', process.env.SRT_NODE);
const PINNED = [
  'mcp-server-commands@0.5.0',
  '@openai/codex-shell-tool-mcp@0.97.0',
  '@openai/codex@0.97.0',
  '@anthropic-ai/sandbox-runtime@0.0.83',
];

/** Installs the pinned peers once (npm, scripts off) and names Codex's sandbox helper. */
function installPeers() {
  mkdirSync(PEERS, { recursive: true });
  const missing = PINNED.filter((spec) => {
    const name = spec.slice(0, spec.lastIndexOf('@'));
    const version = spec.slice(spec.lastIndexOf('@') + 1);
    const manifest = path.join(PEERS, 'node_modules', name, 'package.json');
    return !existsSync(manifest) || JSON.parse(readFileSync(manifest, 'utf8')).version !== version;
  });
  if (missing.length > 0) {
    if (!existsSync(path.join(PEERS, 'package.json')))
      writeFileSync(path.join(PEERS, 'package.json'), '{"private":true}\n');
    process.stderr.write(`installing ${missing.join(' ')} into ${PEERS}\n`);
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', ...missing], {
      cwd: PEERS,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }
  // codex dispatches on its arg0: run as `codex-linux-sandbox`, it applies Landlock + seccomp.
  const helper = path.join(PEERS, 'codex-linux-sandbox');
  const triple = process.arch === 'arm64' ? 'aarch64-unknown-linux-musl' : 'x86_64-unknown-linux-musl';
  if (!existsSync(helper))
    symlinkSync(path.join(PEERS, 'node_modules/@openai/codex/vendor', triple, 'codex/codex'), helper);
  return helper;
}

const CODEX_SANDBOX = installPeers();
const SCRATCH = mkdtempSync('/var/tmp/termgate-first-command-');
const WORKSPACE = path.join(SCRATCH, 'ws');
mkdirSync(WORKSPACE);
const UNSANDBOXED_POLICY = path.join(SCRATCH, 'allow.yaml');
writeFileSync(
  UNSANDBOXED_POLICY,
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a policy placeholder, not a template
  "default: allow\ncwd: { roots: ['${SERVER_CWD}'] }\nsandbox: { mode: off }\n",
);
let audits = 0;
const output = (result) => JSON.stringify(result.content ?? []);

const termgate = (label, bin, policy) => ({
  label,
  args: () => [
    bin,
    'serve',
    ...(policy === null ? [] : ['--policy', policy]),
    '--audit',
    path.join(SCRATCH, `audit-${label.replace(/\W+/g, '-')}`, `audit-${++audits}.jsonl`),
  ],
  call: { name: 'terminal_create', arguments: { command: 'echo hi' } },
  ok: (result) => result.structuredContent?.output === 'hi\n',
});

const SERVERS = [
  termgate('termgate, shipped default (sandbox on)', path.join(REPO_ROOT, 'packages/cli/dist/bin.js'), null),
  termgate(
    'termgate, `default: allow`, sandbox off',
    path.join(REPO_ROOT, 'packages/cli/dist/bin.js'),
    UNSANDBOXED_POLICY,
  ),
  ...(BEFORE === undefined
    ? []
    : [
        termgate('before: termgate, shipped default (sandbox on)', BEFORE, null),
        termgate('before: termgate, `default: allow`, sandbox off', BEFORE, UNSANDBOXED_POLICY),
      ]),
  {
    label: '`@openai/codex-shell-tool-mcp` 0.97.0 (Landlock + seccomp)',
    args: () => [path.join(PEERS, 'node_modules/@openai/codex-shell-tool-mcp/bin/mcp-server.js')],
    // What Codex sends before it uses the server: without it the server runs nothing on Linux.
    prepare: (client) =>
      client.request('codex/sandbox-state/update', {
        sandboxPolicy: {
          type: 'workspace-write',
          writable_roots: [WORKSPACE],
          network_access: false,
          exclude_tmpdir_env_var: false,
          exclude_slash_tmp: false,
        },
        codexLinuxSandboxExe: CODEX_SANDBOX,
        sandboxCwd: WORKSPACE,
      }),
    call: { name: 'shell', arguments: { command: 'echo hi', workdir: WORKSPACE, login: false } },
    ok: (result) => output(result).includes('\\"output\\":\\"hi\\\\n\\"'),
  },
  ...(SRT_NODE === undefined
    ? []
    : [
        {
          label: 'MCP SDK server + `@anthropic-ai/sandbox-runtime` 0.0.83 per command',
          node: SRT_NODE,
          args: () => [path.join(REPO_ROOT, 'bench/mcp/srt-reference-server.mjs'), PEERS, WORKSPACE],
          call: { name: 'run_command', arguments: { command: 'echo hi' } },
          ok: (result) => output(result).includes('hi\\n') && result.isError !== true,
        },
      ]),
  {
    label: '`mcp-server-commands` 0.5.0 (no confinement)',
    args: () => [path.join(PEERS, 'node_modules/mcp-server-commands/build/index.js')],
    call: { name: 'run_command', arguments: { command: 'echo hi' } },
    ok: (result) => output(result).includes('hi'),
  },
];

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
  constructor(args, node = process.execPath) {
    this.startedAt = performance.now();
    this.child = spawn(node, args, {
      cwd: WORKSPACE,
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
    // Settled: what the tree holds once the calls are done (no command running).
    await new Promise((resolve) => setTimeout(resolve, 500));
    this.endRss = treeRss(this.child.pid);
    this.peakRss = Math.max(this.peakRss, this.endRss);
    clearInterval(this.sampler);
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await new Promise((resolve) => this.child.once('exit', resolve));
    clearTimeout(timer);
  }
}

async function measure(server) {
  const client = new LineClient(server.args(), server.node);
  await client.request('initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'termgate-bench', version: '0.0.0' },
  });
  client.notify('notifications/initialized');
  if (server.prepare !== undefined) {
    const prepared = await server.prepare(client);
    if (prepared.error !== undefined) throw new Error(`${server.label}: ${JSON.stringify(prepared.error)}`);
  }
  await client.request('tools/list', {});
  const listed = performance.now() - client.startedAt;
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
  return {
    listed,
    firstCall,
    total: listed + firstCall,
    warm,
    peakRss: client.peakRss,
    endRss: client.endRss,
  };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.ceil(values.length / 2) - 1];
const p90 = (values) => [...values].sort((a, b) => a - b)[Math.ceil(values.length * 0.9) - 1];

async function main() {
  const results = SERVERS.map(() => ({
    listed: [],
    firstCall: [],
    total: [],
    warm: [],
    peakRss: [],
    endRss: [],
  }));
  for (const server of SERVERS) await measure(server); // warm the file-system cache (and termgate's policy check cache)
  for (let run = 0; run < RUNS; run++) {
    for (let k = 0; k < SERVERS.length; k++) {
      const index = (run + k) % SERVERS.length;
      const measured = await measure(SERVERS[index]);
      const into = results[index];
      for (const key of ['listed', 'firstCall', 'total', 'peakRss', 'endRss']) into[key].push(measured[key]);
      into.warm.push(...measured.warm);
    }
  }
  const out = (text = '') => process.stdout.write(`${text}\n`);
  out(
    `Run ${new Date().toISOString()} on ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, Node ${process.version}; load average ${loadavg()[0].toFixed(2)} at the end; ${RUNS} runs per server, interleaved, ${CALLS} warm calls each after ${WARMUP} untimed.`,
  );
  out();
  out(
    '| server | start → `tools/list` ms | first `echo hi` after `tools/list` ms | warm `echo hi` median ms | warm p90 ms | peak tree RSS MB | settled tree RSS MB |',
  );
  out('|---|---:|---:|---:|---:|---:|---:|');
  SERVERS.forEach((server, i) => {
    const r = results[i];
    out(
      `| ${server.label} | ${median(r.listed).toFixed(1)} | ${median(r.firstCall).toFixed(1)} | ${median(r.warm).toFixed(2)} | ${p90(r.warm).toFixed(2)} | ${(median(r.peakRss) / 1e6).toFixed(1)} | ${(median(r.endRss) / 1e6).toFixed(1)} |`,
    );
  });
  out();
  const of = (prefix) => results[SERVERS.findIndex((s) => s.label.startsWith(prefix))];
  const sandboxed = of('termgate, shipped');
  const unsandboxed = of('termgate, `default');
  const codex = of('`@openai/codex');
  const commands = of('`mcp-server-commands');
  const srt = of('MCP SDK server');
  const peersSandboxed = [codex, srt].filter((r) => r !== undefined);
  const ratio = (a, b) => `${(a / b).toFixed(2)}×`;
  const fastestFirst = Math.min(...peersSandboxed.map((r) => median(r.firstCall)));
  const smallestRss = Math.min(...peersSandboxed.map((r) => median(r.peakRss)));
  const smallestSettled = Math.min(...peersSandboxed.map((r) => median(r.endRss)));
  out('| #22 target | measured | target |');
  out('|---|---:|---:|');
  out(
    `| sandboxed warm \`echo hi\` / codex-shell-tool-mcp | ${ratio(median(sandboxed.warm), median(codex.warm))} | ≤ 1.0× |`,
  );
  out(
    `| unsandboxed warm \`echo hi\` / mcp-server-commands | ${ratio(median(unsandboxed.warm), median(commands.warm))} | ≤ 1.2× |`,
  );
  out(
    `| first command after \`tools/list\` (sandboxed) / fastest sandboxed peer | ${ratio(median(sandboxed.firstCall), fastestFirst)} | ≤ 10× |`,
  );
  out(
    `| whole tree RSS (sandboxed) / smallest sandboxed peer, peak | ${ratio(median(sandboxed.peakRss), smallestRss)} | ≤ 2× |`,
  );
  out(
    `| whole tree RSS (sandboxed) / smallest sandboxed peer, settled | ${ratio(median(sandboxed.endRss), smallestSettled)} | ≤ 2× |`,
  );
}

main()
  .catch((error) => {
    process.stderr.write(`${error.stack ?? error}\n`);
    process.exitCode = 1;
  })
  .finally(() => rmSync(SCRATCH, { recursive: true, force: true }));
