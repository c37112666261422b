#!/usr/bin/env node
/**
 * What an `ask` costs on the wire, with the person's time taken out: a
 * one-call `terminal_create` whose rule asks, answered "allow once" at once by
 * the client's elicitation handler, against the same create of a line a rule
 * allows. Both through the real v2 client (@modelcontextprotocol/client 2.4.0),
 * on one server per protocol revision, interleaved in one run:
 *
 *   npx -y pnpm@12.4.2 run build && node bench/mcp/ask-roundtrip.mjs [--calls 200] [--warmup 20]
 *
 * - 2026-07-28: the asked create is two `tools/call` round trips (the first
 *   answers `input_required` with a sealed `requestState`, the client's
 *   handler answers, the client retries), plus the gate's ask and answer
 *   records;
 * - 2025-11-25: one `tools/call` during which the server sends
 *   `elicitation/create` and waits for its answer.
 * The policy has no sandbox section (the sandbox's cost is measured
 * elsewhere), and the audit trail is written without fsync, as by default.
 * Prints Markdown on stdout. Not a test: no pass/fail.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const option = (name, fallback) => {
  const index = process.argv.indexOf(`--${name}`);
  return index === -1 ? fallback : process.argv[index + 1];
};
const CALLS = Number(option('calls', 200));
const WARMUP = Number(option('warmup', 20));

const scratch = mkdtempSync(path.join(tmpdir(), 'termgate-ask-bench-'));
const policy = path.join(scratch, 'policy.yaml');
writeFileSync(
  policy,
  [
    'default: deny',
    'rules:',
    "  - { id: ask-true-ask, decision: ask, program: 'true', argvPrefix: [[ask]], reason: the benchmark's asked line }",
    "  - { id: allow-true, decision: allow, program: 'true' }",
    '',
  ].join('\n'),
);

let asked = 0;
async function connect(revision) {
  const client = new Client(
    { name: `ask-bench-${revision}`, version: '0' },
    {
      capabilities: { elicitation: { form: {} } },
      ...(revision === '2026-07-28' && { versionNegotiation: { mode: { pin: revision } } }),
    },
  );
  client.setRequestHandler('elicitation/create', async () => {
    asked += 1;
    return { action: 'accept', content: { decision: 'allow_once' } };
  });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [
        path.join(REPO_ROOT, 'packages/cli/dist/bin.js'),
        'serve',
        '--policy',
        policy,
        '--audit',
        path.join(scratch, `audit-${revision}.jsonl`),
        '--log-level',
        'warn',
      ],
      cwd: scratch,
      stderr: 'ignore',
    }),
  );
  return client;
}

async function create(client, command) {
  const started = process.hrtime.bigint();
  const result = await client.callTool(
    { name: 'terminal_create', arguments: { command, cwd: scratch } },
    { timeout: 30_000 },
  );
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.isError || result.structuredContent?.exitCode !== 0) {
    throw new Error(`${command}: ${JSON.stringify(result).slice(0, 400)}`);
  }
  await client.callTool({
    name: 'terminal_release',
    arguments: { terminalId: result.structuredContent.terminalId },
  });
  return ms;
}

const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};

console.log(
  `## ask round trip (v2 client, handler answers at once; ${CALLS} calls each after ${WARMUP} warm-up, interleaved; node ${process.version}, ${cpus().length} cores, load ${loadavg()[0].toFixed(2)})\n`,
);
console.log(
  '| revision | allowed `true` median ms | asked `true ask` median ms | p90 allowed / asked | asked / allowed |',
);
console.log('|---|---:|---:|---:|---:|');
for (const revision of ['2026-07-28', '2025-11-25']) {
  const client = await connect(revision);
  const allowed = [];
  const askedTimes = [];
  for (let i = 0; i < WARMUP; i++) {
    await create(client, 'true');
    await create(client, 'true ask');
  }
  const before = asked;
  for (let i = 0; i < CALLS; i++) {
    allowed.push(await create(client, 'true'));
    askedTimes.push(await create(client, 'true ask'));
  }
  if (asked - before !== CALLS)
    throw new Error(`expected ${CALLS} questions, the handler saw ${asked - before}`);
  await client.close();
  const a = quantile(allowed, 0.5);
  const b = quantile(askedTimes, 0.5);
  console.log(
    `| ${revision} | ${a.toFixed(2)} | ${b.toFixed(2)} | ${quantile(allowed, 0.9).toFixed(2)} / ${quantile(askedTimes, 0.9).toFixed(2)} | **${(b / a).toFixed(2)}×** |`,
  );
}
rmSync(scratch, { recursive: true, force: true });
