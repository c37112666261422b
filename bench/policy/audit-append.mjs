#!/usr/bin/env node
/**
 * Audit append benchmark: `FileAuditSink.append` (serializing, hash
 * chain, checked `fs.writeSync`, path check, optional fsync) against a
 * baseline of plain `fs.writeSync` of the same event as one JSON line to a
 * file opened with 'a' (plus `fs.fsyncSync` in the fsync rows).
 *
 *   npx tsc -b packages/audit && node bench/policy/audit-append.mjs [--records N] [--fsync-records N] [--rounds N]
 *
 * Rounds alternate sink and baseline so drift hits both equally; each
 * round writes to a fresh file in the OS temp dir after a warm-up. Prints a
 * Markdown report on stdout (paste it under `## policy` → `### audit append`
 * in docs/BENCHMARKS.md). Not a test: no pass/fail.
 */
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { FileAuditSink } from '../../packages/audit/dist/adapters/index.js';

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '20000' },
    'fsync-records': { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '3' },
  },
});
const RECORDS = Number(values.records);
const FSYNC_RECORDS = Number(values['fsync-records']);
const ROUNDS = Number(values.rounds);
const WARMUP = 500;

/** A create decision as the gate records it (about 0.9 KB sealed). */
function decisionEvent(i) {
  return {
    event: {
      kind: 'event',
      category: ['process'],
      type: ['info', 'allowed'],
      action: 'terminal-create',
      outcome: 'success',
      reason: 'npm test is allowed by rule npm-scripts',
    },
    process: {
      command_line: `npm test -- --shard=${i % 8}/8`,
      args: ['bash', '--noprofile', '--norc', '-c', `npm test -- --shard=${i % 8}/8`],
      working_directory: '/home/agent/work/project',
    },
    rule: { id: ['npm-scripts'] },
    termgate: {
      terminal_id: '6f1d2c1e-8a51-4d5e-9c55-2b8f3f0e9a17',
      verb: 'create',
      decision: 'allow',
      env_names: ['CI', 'NODE_ENV'],
      subcommands: [{ program: 'npm', argv: ['npm', 'test', '--', `--shard=${i % 8}/8`], via: [] }],
      policy: { sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' },
      client: { name: 'claude-code', version: '2.1.0' },
      protocol: 'mcp/2026-07-28',
    },
  };
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Runs `append(i)` n times after a warm-up; returns per-call latencies (ns) and wall time (ns). */
function measure(n, setup) {
  const { append, done } = setup();
  for (let i = 0; i < WARMUP; i += 1) append(i);
  const latencies = new Float64Array(n);
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i += 1) {
    const t0 = process.hrtime.bigint();
    append(i);
    latencies[i] = Number(process.hrtime.bigint() - t0);
  }
  const wall = Number(process.hrtime.bigint() - start);
  const bytes = done();
  return { latencies, wall, bytes };
}

function sinkSetup(dir, fsync) {
  return () => {
    const file = path.join(dir, `sink-${process.hrtime.bigint()}.jsonl`);
    const sink = FileAuditSink.open(file, { fsync, service: { version: '0.1.0' } });
    return {
      append: (i) => sink.append(decisionEvent(i)),
      done: () => {
        sink.close();
        const { size } = statSync(file);
        rmSync(file);
        return size;
      },
    };
  };
}

function baselineSetup(dir, fsync) {
  return () => {
    const file = path.join(dir, `base-${process.hrtime.bigint()}.jsonl`);
    const fd = openSync(file, 'a');
    return {
      append: (i) => {
        const line = `${JSON.stringify({ '@timestamp': new Date().toISOString(), seq: i, ...decisionEvent(i) })}\n`;
        writeSync(fd, line);
        if (fsync) fsyncSync(fd);
      },
      done: () => {
        closeSync(fd);
        const { size } = statSync(file);
        rmSync(file);
        return size;
      },
    };
  };
}

function summarize(runs, n) {
  const all = Float64Array.from(runs.flatMap((r) => [...r.latencies])).sort();
  const wall = runs.reduce((sum, r) => sum + r.wall, 0);
  return {
    perSecond: (n * runs.length) / (wall / 1e9),
    p50: percentile(all, 50) / 1000,
    p99: percentile(all, 99) / 1000,
    bytesPerRecord: runs[0].bytes / (n + WARMUP),
  };
}

const dir = mkdtempSync(path.join(tmpdir(), 'termgate-bench-audit-'));
const rows = [];
try {
  for (const [fsync, n] of [
    [false, RECORDS],
    [true, FSYNC_RECORDS],
  ]) {
    const sinkRuns = [];
    const baseRuns = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      sinkRuns.push(measure(n, sinkSetup(dir, fsync)));
      baseRuns.push(measure(n, baselineSetup(dir, fsync)));
    }
    const sink = summarize(sinkRuns, n);
    const base = summarize(baseRuns, n);
    rows.push({ fsync, n, sink, base });
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const fmt = (x, digits = 1) =>
  x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const lines = [
  `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, ` +
    `temp dir ${tmpdir()}; ${ROUNDS} rounds per row, ${WARMUP} warm-up appends per round.`,
  '',
  '| writer | fsync | records | records/s | p50 µs | p99 µs | bytes/record | vs baseline (records/s) |',
  '|---|---|---|---|---|---|---|---|',
];
for (const { fsync, n, sink, base } of rows) {
  const f = fsync ? 'yes' : 'no';
  lines.push(
    `| FileAuditSink.append | ${f} | ${n * ROUNDS} | ${fmt(sink.perSecond, 0)} | ${fmt(sink.p50)} | ${fmt(sink.p99)} | ${fmt(sink.bytesPerRecord, 0)} | ${fmt(sink.perSecond / base.perSecond, 2)}× |`,
    `| fs.writeSync(JSON line) | ${f} | ${n * ROUNDS} | ${fmt(base.perSecond, 0)} | ${fmt(base.p50)} | ${fmt(base.p99)} | ${fmt(base.bytesPerRecord, 0)} | 1.00× |`,
  );
}
process.stdout.write(`${lines.join('\n')}\n`);
