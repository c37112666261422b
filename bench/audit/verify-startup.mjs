#!/usr/bin/env node
/**
 * What `termgate audit verify` costs a reviewer now that the trail is its own
 * package (@termgate/audit) and the audit commands load no policy engine,
 * against the same command with the policy package loaded first (what the
 * CLI paid before the trail moved out of @termgate/policy: its index, and
 * with it the engine, the schema validator and the bash parser's module).
 * Side by side in one run, interleaved, on the same small trail:
 *
 *   npx -y pnpm@12.4.2 run build && node bench/audit/verify-startup.mjs [--runs 15] [--records 1000]
 *
 * Per variant: the median and p90 wall time of the whole process (start to
 * exit, which for a small trail is almost all module loading), and the number
 * of ES modules it loaded (bench/mcp/module-count-hooks.mjs). Both must exit 0
 * (an intact trail). Prints Markdown on stdout. Not a test: no pass/fail.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { writeSyntheticTrail } from './synthetic-trail.mjs';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const option = (name, fallback) => {
  const index = process.argv.indexOf(`--${name}`);
  return index === -1 ? fallback : process.argv[index + 1];
};
const RUNS = Number(option('runs', 15));
const RECORDS = Number(option('records', 1000));

const BIN = path.join(REPO_ROOT, 'packages/cli/dist/bin.js');
const POLICY_INDEX = pathToFileURL(path.join(REPO_ROOT, 'packages/policy/dist/index.js')).href;
const HOOKS = pathToFileURL(path.join(REPO_ROOT, 'bench/mcp/module-count-hooks.mjs')).href;
const scratch = mkdtempSync(path.join(tmpdir(), 'termgate-verify-startup-'));
const trail = path.join(scratch, 'audit.jsonl');
writeSyntheticTrail(trail, RECORDS);
const register = path.join(scratch, 'register.mjs');
writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(HOOKS)});\n`);

const VARIANTS = [
  { label: '`termgate audit verify` (loads @termgate/audit only)', pre: [] },
  {
    label: 'baseline: the same, with @termgate/policy loaded first (as before the split)',
    pre: ['--import', POLICY_INDEX],
  },
];

function runOnce(variant, countModules) {
  const log = path.join(scratch, 'modules.log');
  rmSync(log, { force: true });
  const hooks = countModules ? ['--import', pathToFileURL(register).href] : [];
  const started = process.hrtime.bigint();
  const result = spawnSync(process.execPath, [...hooks, ...variant.pre, BIN, 'audit', 'verify', trail], {
    encoding: 'utf8',
    env: { ...process.env, TERMGATE_BENCH_MODULE_LOG: log },
  });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) throw new Error(`${variant.label}: exit ${result.status}\n${result.stderr}`);
  const modules = countModules ? new Set(readFileSync(log, 'utf8').split('\n').filter(Boolean)) : null;
  return { ms, modules };
}

const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};

const times = VARIANTS.map(() => []);
for (const variant of VARIANTS) runOnce(variant, false); // warm the page cache
for (let run = 0; run < RUNS; run++) {
  VARIANTS.forEach((variant, i) => {
    times[i].push(runOnce(variant, false).ms);
  });
}
const counts = VARIANTS.map((variant) => runOnce(variant, true).modules);
const parserLoaded = counts.map((set) => [...set].some((url) => url.includes('web-tree-sitter')));

const medians = times.map((t) => quantile(t, 0.5));
console.log(
  `## audit verify start-up (${RECORDS} records, ${RUNS} runs each, interleaved; node ${process.version}, ${cpus().length} cores, load ${loadavg()[0].toFixed(2)})\n`,
);
console.log('| variant | median ms | p90 ms | ES modules loaded | web-tree-sitter loaded |');
console.log('|---|---:|---:|---:|---|');
VARIANTS.forEach((variant, i) => {
  console.log(
    `| ${variant.label} | ${medians[i].toFixed(1)} | ${quantile(times[i], 0.9).toFixed(1)} | ${counts[i].size} | ${parserLoaded[i] ? 'yes' : 'no'} |`,
  );
});
console.log(
  `\nratio (audit only / baseline), median wall time: **${(medians[0] / medians[1]).toFixed(2)}×**`,
);
rmSync(scratch, { recursive: true, force: true });
