#!/usr/bin/env node
/**
 * `termgate audit verify` of a large trail, in records per second, against
 * `sha256sum` of the same bytes as the floor (verification hashes every
 * byte once, plus JSON parsing and the chain checks).
 *
 *   npx -y pnpm@12.4.2 run build && node bench/audit/verify.mjs [--records 1000000] [--rounds 3]
 *
 * Both are run as processes, interleaved round by round; the trail is
 * generated once (bench/audit/synthetic-trail.mjs) and read once before
 * timing so both read from the page cache. Prints Markdown for
 * docs/BENCHMARKS.md. Not a test: no pass/fail.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { writeSyntheticTrail } from './synthetic-trail.mjs';

const { values } = parseArgs({
  options: { records: { type: 'string', default: '1000000' }, rounds: { type: 'string', default: '3' } },
});
const RECORDS = Number(values.records);
const ROUNDS = Number(values.rounds);
const BIN = path.resolve(
  import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname),
  '../../packages/cli/dist/bin.js',
);

const dir = mkdtempSync(path.join(tmpdir(), 'termgate-bench-verify-'));
try {
  const file = path.join(dir, 'audit.jsonl');
  const generatedAt = performance.now();
  const bytes = writeSyntheticTrail(file, RECORDS);
  const generateMs = performance.now() - generatedAt;
  readFileSync(file); // into the page cache

  const time = (command, args) => {
    const started = performance.now();
    const result = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 1 << 20 });
    const ms = performance.now() - started;
    if (result.status !== 0)
      throw new Error(`${command} ${args.join(' ')} failed: ${result.stdout}${result.stderr}`);
    return { ms, out: result.stdout };
  };
  const verify = [];
  const floor = [];
  let verdict = '';
  for (let round = 0; round < ROUNDS; round += 1) {
    const v = time(process.execPath, [BIN, 'audit', 'verify', file]);
    verdict = v.out.trim();
    verify.push(v.ms);
    floor.push(time('sha256sum', [file]).ms);
  }
  const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
  const v = median(verify);
  const f = median(floor);
  const mb = bytes / 1e6;
  console.log(`### audit verify (${RECORDS.toLocaleString('en')} records)

- Date: ${new Date().toISOString().slice(0, 10)}; ${cpus().length} cores (${cpus()[0]?.model.trim()}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}; load average at the end ${loadavg()[0].toFixed(1)}.
- Trail: ${mb.toFixed(0)} MB, ${(bytes / RECORDS).toFixed(0)} bytes per record on average (create, spawn and exit records; 1 in 5 creates refused), generated in ${(generateMs / 1000).toFixed(1)} s.
- Medians of ${ROUNDS} interleaved rounds, each a fresh process, file in the page cache.

| | time | records/s | MB/s | vs floor |
|---|---|---|---|---|
| \`termgate audit verify\` | ${(v / 1000).toFixed(2)} s | ${Math.round(RECORDS / (v / 1000)).toLocaleString('en')} | ${(mb / (v / 1000)).toFixed(0)} | ${(v / f).toFixed(2)}× the time |
| \`sha256sum\` (floor) | ${(f / 1000).toFixed(2)} s | ${Math.round(RECORDS / (f / 1000)).toLocaleString('en')} | ${(mb / (f / 1000)).toFixed(0)} | 1.00× |

Verdict printed: \`${verdict.replace(file, 'audit.jsonl')}\`
`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
