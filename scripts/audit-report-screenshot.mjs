#!/usr/bin/env node
// Makes docs/audit-report.png, the README's picture of `termgate audit report`:
// a synthetic trail of 120 records, its report, opened in Debian's headless
// chromium (playwright-core), the first terminal's details open.
//   npx -y pnpm@12.4.2 run build && node scripts/audit-report-screenshot.mjs
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { writeSyntheticTrail } from '../bench/audit/synthetic-trail.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const dir = mkdtempSync(path.join(tmpdir(), 'termgate-screenshot-'));
let context;
try {
  const trail = path.join(dir, 'audit.jsonl');
  const html = path.join(dir, 'report.html');
  writeSyntheticTrail(trail, 120, Date.parse('2026-11-30T09:00:00Z'));
  const result = spawnSync(
    process.execPath,
    [path.join(root, 'packages/cli/dist/bin.js'), 'audit', 'report', 'audit.jsonl', '--html', html],
    { cwd: dir, encoding: 'utf8' },
  );
  if (result.status !== 0) throw new Error(result.stderr);
  context = await chromium.launchPersistentContext(path.join(dir, 'profile'), {
    executablePath: '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1280, height: 860 },
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
  const page = await context.newPage();
  await page.goto(pathToFileURL(html).href);
  await page.waitForSelector('body[data-ready="1"]');
  await page.locator('#terminal-rows tr[data-id]').nth(1).click();
  await page.screenshot({ path: path.join(root, 'docs/audit-report.png') });
} finally {
  await context?.close();
  rmSync(dir, { recursive: true, force: true });
}
