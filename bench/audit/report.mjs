#!/usr/bin/env node
/**
 * `termgate audit report` on a large trail: the time to write the HTML
 * (against `termgate audit verify` of the same trail, which the report
 * runs first), and, in Debian's headless chromium driven by playwright-core,
 * the time until the page is interactive (`<body data-ready="1">`, set after
 * the first render) and the time one filter takes.
 *
 *   npx -y pnpm@12.4.2 run build && node bench/audit/report.mjs [--records 100000] [--rounds 3]
 *
 * Prints Markdown for docs/BENCHMARKS.md. Not a test: no pass/fail.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { writeSyntheticTrail } from './synthetic-trail.mjs';

const { values } = parseArgs({
  options: { records: { type: 'string', default: '100000' }, rounds: { type: 'string', default: '3' } },
});
const RECORDS = Number(values.records);
const ROUNDS = Number(values.rounds);
const BIN = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../packages/cli/dist/bin.js');

const dir = mkdtempSync(path.join(tmpdir(), 'termgate-bench-report-'));
let context;
try {
  const file = path.join(dir, 'audit.jsonl');
  const html = path.join(dir, 'report.html');
  const bytes = writeSyntheticTrail(file, RECORDS);
  const time = (args) => {
    const started = performance.now();
    const result = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`${args.join(' ')} failed: ${result.stdout}${result.stderr}`);
    return performance.now() - started;
  };
  context = await chromium.launchPersistentContext(path.join(dir, 'profile'), {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const rows = { write: [], verify: [], interactive: [], filter: [] };
  let terminals = '';
  for (let round = 0; round < ROUNDS; round += 1) {
    rows.verify.push(time(['audit', 'verify', file]));
    rows.write.push(time(['audit', 'report', file, '--html', html]));
    const page = await context.newPage();
    const started = performance.now();
    await page.goto(pathToFileURL(html).href);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 120_000 });
    rows.interactive.push(performance.now() - started);
    terminals = await page.locator('#total-count').textContent();
    const denied = await page.locator('#summary-deny').textContent();
    const filterStarted = performance.now();
    await page.selectOption('#f-decision', 'deny');
    // (The page's CSP forbids eval, so no string predicates: wait on the element's text.)
    await page.locator('#shown-count', { hasText: new RegExp(`^${denied}$`) }).waitFor();
    rows.filter.push(performance.now() - filterStarted);
    await page.close();
  }
  const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
  const s = (ms) => `${(ms / 1000).toFixed(2)} s`;
  console.log(`### audit report (${RECORDS.toLocaleString('en')} records)

- Date: ${new Date().toISOString().slice(0, 10)}; ${cpus().length} cores (${cpus()[0]?.model.trim()}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${spawnSync('/usr/bin/chromium', ['--version'], { encoding: 'utf8' }).stdout.trim()}; load average at the end ${loadavg()[0].toFixed(1)}.
- Trail: ${(bytes / 1e6).toFixed(0)} MB, ${terminals} terminals. Report: ${(statSync(html).size / 1e6).toFixed(1)} MB of HTML.
- Medians of ${ROUNDS} rounds.

| step | time |
|---|---|
| \`termgate audit verify\` (baseline: the report verifies first) | ${s(median(rows.verify))} |
| \`termgate audit report --html\` (verify, model, write) | ${s(median(rows.write))} (${(median(rows.write) / median(rows.verify)).toFixed(2)}× verify) |
| page load until interactive (first render of ${Math.min(500, Number(terminals))} rows, filters ready) | ${s(median(rows.interactive))} |
| one filter (decision = deny) until the counts show | ${s(median(rows.filter))} |
`);
} finally {
  await context?.close();
  rmSync(dir, { recursive: true, force: true });
}
