#!/usr/bin/env node
/**
 * One terminal attacks, another works: the server's responsiveness under
 * attack against the same server quiet, interleaved in one run.
 *
 * One sandboxed `serve` (network allowlist, so the proxy and relay run).
 * Each round has a quiet phase, a busy phase (the control: one terminal
 * only burns a core, as the attacker's one process does) and an attack
 * phase; in the attack phase one
 * terminal runs a slowloris flood (half-sent heads reopened as fast as the
 * proxy ends them, 300 held), refused CONNECTs with its own credential and
 * without, whose client leaves at once, and holds its whole share of open
 * tunnels; the phase's requests run meanwhile. Measured per phase:
 * - the server's own event-loop delay (monitorEventLoopDelay in the server,
 *   preloaded from loop-delay-preload.cjs, read per phase with SIGUSR2);
 * - `tools/list` round trip from the client (the event-loop delay as a
 *   client sees it);
 * - `tools/call terminal_create` of `true` (waits for its exit) round trip;
 * - `tools/call terminal_create` of a proxied `curl` to an allowed host.
 *
 *   node bench/sandbox/hostile.mjs [--calls 40] [--rounds 3]
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(REPO_ROOT, 'packages/cli/dist/bin.js');
const { values } = parseArgs({
  options: { calls: { type: 'string', default: '40' }, rounds: { type: 'string', default: '3' } },
});
const CALLS = Number(values.calls);
const ROUNDS = Number(values.rounds);
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '0' },
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Outside /tmp: the sandbox's private /tmp would hide it.
const root = mkdtempSync('/var/tmp/termgate-bench-hostile-');
const workspace = path.join(root, 'ws');
const runtime = path.join(root, 'runtime');
mkdirSync(workspace);
mkdirSync(runtime, { mode: 0o700 });
const policy = path.join(root, 'policy.yaml');
writeFileSync(
  policy,
  [
    'default: allow',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a policy placeholder
    "cwd: { roots: ['${SERVER_CWD}'] }",
    'sandbox:',
    '  mode: required',
    '  filesystem:',
    '    privateTmp: false',
    "  network: { allow: ['127.0.0.2'] }",
    '',
  ].join('\n'),
);
// The allowed host's service: proxied requests of the working terminal reach it.
const service = createServer((_req, res) => res.end('service-answer\n'));
await new Promise((resolve) => service.listen(0, '0.0.0.0', resolve));
const SERVICE_PORT = service.address().port;
const loopFile = path.join(root, 'loop-delay');
const child = spawn(
  process.execPath,
  [
    '--require',
    path.join(path.dirname(fileURLToPath(import.meta.url)), 'loop-delay-preload.cjs'),
    BIN,
    'serve',
    '--policy',
    policy,
    '--audit',
    path.join(root, 'state', 'audit.jsonl'),
    '--log-level',
    'silent',
  ],
  {
    cwd: workspace,
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, TMPDIR: runtime, TERMGATE_BENCH_LOOP_FILE: loopFile },
  },
);
let buffer = '';
const waiters = new Map();
child.stdout.setEncoding('utf8');
child.stdout.on('data', (chunk) => {
  buffer += chunk;
  for (let nl = buffer.indexOf('\n'); nl !== -1; nl = buffer.indexOf('\n')) {
    const message = JSON.parse(buffer.slice(0, nl));
    buffer = buffer.slice(nl + 1);
    waiters.get(message.id)?.(message);
    waiters.delete(message.id);
  }
});
let nextId = 1;
function request(method, params) {
  const id = nextId++;
  return new Promise((resolve) => {
    waiters.set(id, resolve);
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: META } })}\n`,
    );
  });
}
const tool = (name, args) => request('tools/call', { name, arguments: args });

const ATTACK = `python3 - <<'PY'
import base64, os, socket, time, urllib.parse
u = urllib.parse.urlsplit(os.environ['HTTPS_PROXY'])
AUTH = 'proxy-authorization: Basic ' + base64.b64encode(('%s:%s' % (urllib.parse.unquote(u.username), urllib.parse.unquote(u.password))).encode()).decode() + '\\r\\n'
tunnels, held = [], []
for i in range(40):
    try:
        s = socket.create_connection(('127.0.0.1', 3128), 2)
        s.sendall(('CONNECT 127.0.0.2:${SERVICE_PORT} HTTP/1.1\\r\\nhost: x\\r\\n%s\\r\\n' % AUTH).encode())
        tunnels.append(s)
    except OSError:
        pass
i = 0
while True:
    i += 1
    try:
        s = socket.create_connection(('127.0.0.1', 3128), 1)
        s.sendall(b'GET http://127.0.0.2:1/ HTTP/1.1\\r\\nhost: x\\r\\n')
        held.append(s)
        if len(held) > 300:
            held.pop(0).close()
        s = socket.create_connection(('127.0.0.1', 3128), 1)
        proof = AUTH if i % 2 else ''
        s.sendall(('CONNECT 127.0.0.1:1 HTTP/1.1\\r\\nhost: 127.0.0.1:1\\r\\n%s\\r\\n' % proof).encode())
        s.close()
    except OSError:
        time.sleep(0.01)
PY`;

let loopSeq = 0;
/** The server's event-loop delay since the previous call (SIGUSR2 to the preloaded monitor). */
async function loopDelay() {
  loopSeq += 1;
  child.kill('SIGUSR2');
  for (let i = 0; i < 500; i++) {
    if (existsSync(loopFile)) {
      const [seq, json] = readFileSync(loopFile, 'utf8').trim().split(' ');
      if (Number(seq) === loopSeq) return JSON.parse(json);
    }
    await sleep(10);
  }
  throw new Error('the server did not report its event-loop delay');
}

/** The control: one terminal that only burns a core (one busy process, as the attack's python is). */
const BUSY = `python3 -c 'while True: pass'`;

async function phase(command) {
  let attacker = null;
  if (command !== null) {
    const created = await tool('terminal_create', { command, waitSeconds: 0 });
    attacker = created.result.structuredContent.terminalId;
    await sleep(1000);
  }
  const list = [];
  const create = [];
  const proxied = [];
  await loopDelay();
  for (let i = 0; i < CALLS; i++) {
    let began = performance.now();
    await request('tools/list', {});
    list.push(performance.now() - began);
    began = performance.now();
    const made = await tool('terminal_create', { command: 'true' });
    create.push(performance.now() - began);
    const id = made.result?.structuredContent?.terminalId;
    if (id !== undefined) await tool('terminal_release', { terminalId: id });
    if (i % 4 === 0) {
      began = performance.now();
      const fetched = await tool('terminal_create', {
        command: `curl -sS -m 30 http://127.0.0.2:${SERVICE_PORT}/`,
      });
      proxied.push(performance.now() - began);
      if (!JSON.stringify(fetched).includes('service-answer'))
        failures.push(JSON.stringify(fetched).slice(0, 300));
      const fid = fetched.result?.structuredContent?.terminalId;
      if (fid !== undefined) await tool('terminal_release', { terminalId: fid });
    }
  }
  const loop = await loopDelay();
  if (attacker !== null) {
    await tool('terminal_kill', { terminalId: attacker });
    await tool('terminal_release', { terminalId: attacker });
    await sleep(500);
  }
  return { list, create, proxied, loop };
}

const failures = [];

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

try {
  await request('tools/list', {});
  await tool('terminal_create', { command: 'true' });
  const kinds = [
    ['quiet', null],
    ['busy', BUSY],
    ['attack', ATTACK],
  ];
  const runs = Object.fromEntries(
    kinds.map(([name]) => [name, { list: [], create: [], proxied: [], loopP99: [], loopMax: [] }]),
  );
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, command] of kinds) {
      const result = await phase(command);
      const into = runs[name];
      into.list.push(...result.list);
      into.create.push(...result.create);
      into.proxied.push(...result.proxied);
      into.loopP99.push(result.loop.p99);
      into.loopMax.push(result.loop.max);
    }
  }
  const worst = (values) => Math.max(...values);
  const p99 = (values) => percentile(values, 99);
  const cell = (of, name) => {
    const quiet = of(runs.quiet);
    const value = of(runs[name]);
    return name === 'quiet'
      ? `${value.toFixed(1)} ms`
      : `${value.toFixed(1)} ms (${(value / quiet).toFixed(2)}×)`;
  };
  const metrics = [
    ['server event-loop delay p99 (worst phase)', (r) => worst(r.loopP99)],
    ['server event-loop delay max', (r) => worst(r.loopMax)],
    ['`tools/list` round trip p99', (r) => p99(r.list)],
    ['`terminal_create true` round trip p99', (r) => p99(r.create)],
    ['`terminal_create` proxied `curl` p99', (r) => p99(r.proxied)],
    ['`terminal_create` proxied `curl` p50', (r) => percentile(r.proxied, 50)],
  ];
  console.log(`${ROUNDS} rounds × ${CALLS} calls per phase (every 4th with a proxied curl), interleaved`);
  console.log('| measure | quiet | busy (one core burnt, control) | attack |');
  console.log('|---|---|---|---|');
  for (const [label, of] of metrics) {
    console.log(`| ${label} | ${kinds.map(([name]) => cell(of, name)).join(' | ')} |`);
  }
  if (failures.length > 0) console.log(`${failures.length} proxied requests failed, first: ${failures[0]}`);
  if (child.exitCode !== null) console.log(`the server exited (${child.exitCode}) during the run`);
} finally {
  child.stdin.end();
  await new Promise((resolve) => child.once('exit', resolve));
  service.closeAllConnections();
  service.close();
  rmSync(root, { recursive: true, force: true });
}
