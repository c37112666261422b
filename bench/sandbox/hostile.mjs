#!/usr/bin/env node
/**
 * One terminal attacks, another works: the server's responsiveness under
 * attack against the same server quiet, interleaved in one run.
 *
 * One sandboxed `serve` (network allowlist, so the proxy and relay run).
 * Each round has a quiet phase and an attack phase; in the attack phase one
 * terminal loops refused CONNECTs whose client leaves at once, holds 40
 * half-sent request heads, and the phase's ~N requests run meanwhile.
 * Measured per phase, from the client:
 * - `tools/list` round trip: the server does nothing for it but answer, so
 *   its p99 is the event-loop delay as a client sees it;
 * - `tools/call terminal_create` of `true` (waits for its exit) round trip.
 *
 *   node bench/sandbox/hostile.mjs [--calls 40] [--rounds 3]
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
const child = spawn(
  process.execPath,
  [
    BIN,
    'serve',
    '--policy',
    policy,
    '--audit',
    path.join(root, 'state', 'audit.jsonl'),
    '--log-level',
    'silent',
  ],
  { cwd: workspace, stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, TMPDIR: runtime } },
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
import socket, time
held = []
for i in range(40):
    try:
        s = socket.create_connection(('127.0.0.1', 3128), 2)
        s.sendall(b'GET http://127.0.0.2:1/ HTTP/1.1\\r\\nhost: x\\r\\n')
        held.append(s)
    except OSError:
        pass
while True:
    try:
        s = socket.create_connection(('127.0.0.1', 3128), 2)
        s.sendall(b'CONNECT 127.0.0.1:1 HTTP/1.1\\r\\nhost: 127.0.0.1:1\\r\\n\\r\\n')
        s.close()
    except OSError:
        time.sleep(0.01)
PY`;

async function phase(attacked) {
  let attacker = null;
  if (attacked) {
    const created = await tool('terminal_create', { command: ATTACK, waitSeconds: 0 });
    attacker = created.result.structuredContent.terminalId;
    await sleep(1000);
  }
  const list = [];
  const create = [];
  for (let i = 0; i < CALLS; i++) {
    let began = performance.now();
    await request('tools/list', {});
    list.push(performance.now() - began);
    began = performance.now();
    const made = await tool('terminal_create', { command: 'true' });
    create.push(performance.now() - began);
    const id = made.result?.structuredContent?.terminalId;
    if (id !== undefined) await tool('terminal_release', { terminalId: id });
  }
  if (attacker !== null) {
    await tool('terminal_kill', { terminalId: attacker });
    await tool('terminal_release', { terminalId: attacker });
    await sleep(500);
  }
  return { list, create };
}

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

try {
  await request('tools/list', {});
  await tool('terminal_create', { command: 'true' });
  const quiet = { list: [], create: [] };
  const attack = { list: [], create: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const [into, attacked] of [
      [quiet, false],
      [attack, true],
    ]) {
      const result = await phase(attacked);
      into.list.push(...result.list);
      into.create.push(...result.create);
    }
  }
  const row = (name, q, a) =>
    `${name.padEnd(34)} quiet p50 ${percentile(q, 50).toFixed(1)} p99 ${percentile(q, 99).toFixed(1)} ms | attack p50 ${percentile(a, 50).toFixed(1)} p99 ${percentile(a, 99).toFixed(1)} ms | p99 ratio ${(percentile(a, 99) / percentile(q, 99)).toFixed(2)}×`;
  console.log(`${ROUNDS} rounds × ${CALLS} calls per phase, interleaved`);
  console.log(row('tools/list (event-loop delay)', quiet.list, attack.list));
  console.log(row('tools/call terminal_create true', quiet.create, attack.create));
  if (child.exitCode !== null) console.log(`the server exited (${child.exitCode}) during the run`);
} finally {
  child.stdin.end();
  await new Promise((resolve) => child.once('exit', resolve));
  rmSync(root, { recursive: true, force: true });
}
