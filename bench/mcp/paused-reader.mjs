#!/usr/bin/env node
/**
 * Peak RSS of `termgate serve` when its client stops reading, side by side
 * with the same requests from a client that reads (the baseline), in one run.
 *
 * Each round starts a fresh server, creates a terminal that printed 1 MiB, then sends
 * N `terminal_output` requests (each answer carries the 1 MiB). The paused
 * client reads nothing until the server's RSS has been flat for 1 s, then
 * reads everything; the reading client reads as answers come. Reported: the
 * server's VmHWM (peak RSS) at the end, and its growth over the idle server.
 *
 *   node bench/mcp/paused-reader.mjs [--requests 300] [--rounds 3]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(REPO_ROOT, 'packages/cli/dist/bin.js');
const { values } = parseArgs({
  options: { requests: { type: 'string', default: '300' }, rounds: { type: 'string', default: '3' } },
});
const REQUESTS = Number(values.requests);
const ROUNDS = Number(values.rounds);
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '0' },
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const hwm = (pid) => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;

async function round(paused) {
  const dir = mkdtempSync(path.join(tmpdir(), 'termgate-bench-paused-'));
  const child = spawn(
    process.execPath,
    [BIN, 'serve', '--audit', path.join(dir, 'audit.jsonl'), '--log-level', 'silent'],
    { cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  let buffer = '';
  const answered = new Map();
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    buffer += chunk;
    let newline = buffer.indexOf('\n');
    while (newline !== -1) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      const id = /"id":(\d+)/.exec(line.slice(0, 40))?.[1];
      if (id !== undefined) answered.set(Number(id), line);
      newline = buffer.indexOf('\n');
    }
  });
  const call = (id, name, args) =>
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, _meta: META } })}\n`,
    );
  const answer = async (id) => {
    while (!answered.has(id)) await sleep(5);
    return JSON.parse(answered.get(id));
  };
  call(1, 'terminal_create', { command: 'head -c 1048576 /dev/zero | tr "\\0" x' });
  const { terminalId } = (await answer(1)).result.structuredContent;
  call(2, 'terminal_wait_for_exit', { terminalId });
  await answer(2);
  const idle = hwm(child.pid);
  if (paused) child.stdout.pause();
  for (let i = 0; i < REQUESTS; i++) call(100 + i, 'terminal_output', { terminalId });
  if (paused) {
    let last = -1;
    let flat = 0;
    while (flat < 4) {
      await sleep(250);
      const now = hwm(child.pid);
      flat = now === last ? flat + 1 : 0;
      last = now;
    }
    child.stdout.resume();
  }
  for (let i = 0; i < REQUESTS; i++) await answer(100 + i);
  const peak = hwm(child.pid);
  child.stdin.end();
  await new Promise((resolve) => child.once('exit', resolve));
  rmSync(dir, { recursive: true, force: true });
  return { idle, peak };
}

const mib = (bytes) => (bytes / 1024 / 1024).toFixed(1);
const rows = { paused: [], reading: [] };
for (let r = 0; r < ROUNDS; r++) {
  rows.paused.push(await round(true));
  rows.reading.push(await round(false));
}
const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
console.log(
  `| client | requests × 1 MiB | peak RSS (MiB, median of ${ROUNDS}) | growth over idle (MiB) | vs reading client |`,
);
console.log('|---|---|---|---|---|');
const readingPeak = median(rows.reading.map((r) => r.peak));
for (const [name, list] of Object.entries(rows)) {
  const peak = median(list.map((r) => r.peak));
  const growth = median(list.map((r) => r.peak - r.idle));
  console.log(
    `| ${name} | ${REQUESTS} | ${mib(peak)} | ${mib(growth)} | ${(peak / readingPeak).toFixed(2)}× |`,
  );
}
