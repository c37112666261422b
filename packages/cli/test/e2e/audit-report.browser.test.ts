/**
 * The review report in a real headless browser: Debian's chromium, driven by
 * playwright-core with the system browser (no browser download). The test
 * writes a trail through the real gate, runs `termgate audit report`, loads
 * the page, filters it and checks the counts and the details.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { auditCommand } from '../../src/commands/audit.js';
import { writeGeneratedTrail } from './support/generated-trail.js';

const CHROMIUM = '/usr/bin/chromium';

/** What the test uses of the page's globals. */
interface PageGlobals {
  getComputedStyle(element: unknown): { backgroundColor: string };
}
const COUNT = 300;

/** How the browser is started: the system chromium, headless, with an empty profile and no background traffic. */
export function launchChromium(userDataDir: string): Promise<BrowserContext> {
  return chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
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
}

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const code = await auditCommand(argv, { stdin: new PassThrough(), stdout, stderr });
  return { code, out, err };
}

describe('termgate audit report in headless chromium', () => {
  let dir: string;
  let context: BrowserContext;
  let page: Page;
  let trail: string;
  let html: string;
  const requests: string[] = [];

  beforeAll(async () => {
    // Never skipped: a machine without chromium fails here (install the Debian package `chromium`).
    expect(existsSync(CHROMIUM)).toBe(true);
    dir = mkdtempSync(path.join(tmpdir(), 'termgate-report-'));
    trail = path.join(dir, 'audit.jsonl');
    html = path.join(dir, 'report.html');
    writeGeneratedTrail(trail, COUNT);
    const result = await run(['report', trail, '--html', html]);
    expect(result).toMatchObject({ code: 0, err: '' });
    expect(result.out).toContain(`${COUNT} terminals`);
    context = await launchChromium(path.join(dir, 'profile'));
    page = await context.newPage();
    page.on('request', (request) => {
      requests.push(request.url());
    });
  }, 60_000);
  afterAll(async () => {
    await context?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  // biome-ignore lint/performance/useDomNodeTextContent: the rendered text is what a reviewer reads.
  const text = (selector: string) => page.locator(selector).innerText();
  const rows = () => page.locator('#terminal-rows tr[data-id]');

  test('the file is self-contained: no external reference, and the page loads nothing else', async () => {
    const source = readFileSync(html, 'utf8');
    expect(source).not.toMatch(/\b(src|href)=["']?(https?:)?\/\//i);
    expect(source).toContain("default-src 'none'");
    expect(statSync(html).mode & 0o777).toBe(0o600);
    await page.goto(pathToFileURL(html).href);
    await page.waitForSelector('body[data-ready="1"]');
    expect(requests).toEqual([pathToFileURL(html).href]);
  });

  test('the verification result is on top', async () => {
    expect(await page.locator('#verification').getAttribute('data-status')).toBe('intact');
    expect(await text('#verification')).toMatch(/intact, \d+ records/);
  });

  test('all terminals are listed, refusals highlighted', async () => {
    expect(await text('#total-count')).toBe(String(COUNT));
    expect(await text('#shown-count')).toBe(String(COUNT));
    expect(await rows().count()).toBe(COUNT);
    expect(await page.locator('#terminal-rows tr.decision-deny').count()).toBe(COUNT / 5);
    const background = await page
      .locator('#terminal-rows tr.decision-deny td')
      .first()
      .evaluate(
        // Runs in the page (the test's lib has no DOM types).
        (cell) => (globalThis as unknown as PageGlobals).getComputedStyle(cell).backgroundColor,
      );
    expect(background).toBe('rgb(253, 236, 234)');
  });

  test('filters by decision, rule, client and text, and the counts follow', async () => {
    await page.selectOption('#f-decision', 'deny');
    expect(await text('#shown-count')).toBe(String(COUNT / 5));
    expect(await page.locator('[data-decision-count="deny"]').getAttribute('data-count')).toBe(
      String(COUNT / 5),
    );
    expect(await page.locator('[data-decision-count="allow"]').count()).toBe(0);
    expect(await page.locator('#terminal-rows tr[data-id]:not(.decision-deny)').count()).toBe(0);

    await page.selectOption('#f-decision', '');
    await page.selectOption('#f-rule', 'git');
    // Odd n, not a multiple of 5: 150 odd numbers below 300, 30 of them multiples of 5.
    expect(await text('#shown-count')).toBe('120');
    await page.selectOption('#f-client', 'claude-code');
    expect(await text('#shown-count')).toBe('0');
    await page.selectOption('#f-rule', '');
    expect(await text('#shown-count')).toBe('150');

    await page.selectOption('#f-client', '');
    await page.fill('#f-text', 'needle-42');
    await page.locator('#shown-count', { hasText: /^1$/ }).waitFor();
    expect(await rows().count()).toBe(1);
  });

  test('a terminal opens its details: command, cwd, rules, reason, env names, bytes and digest', async () => {
    await rows().first().click();
    const details = await text('#terminal-rows .details');
    expect(details).toContain('npm test -- --shard 42 needle-42');
    expect(details).toContain('/home/dev/project');
    expect(details).toContain('npm is allowed by rule npm');
    expect(details).toContain('CI, NPM_TOKEN');
    expect(details).not.toContain('secret');
    expect(details).toContain('142 (0 not kept)');
    expect(details).toContain('b'.repeat(64));
    expect(details).toMatch(/exit\s+1\s/); // 42 is a multiple of 7
  });

  test('a broken trail shows BROKEN on top, with the file and seq', async () => {
    const lines = readFileSync(trail, 'utf8').split('\n');
    lines.splice(10, 1);
    const broken = path.join(dir, 'broken.jsonl');
    writeFileSync(broken, lines.join('\n'));
    const out = path.join(dir, 'broken.html');
    expect((await run(['report', broken, '--html', out])).code).toBe(1);
    await page.goto(pathToFileURL(out).href);
    await page.waitForSelector('body[data-ready="1"]');
    expect(await page.locator('#verification').getAttribute('data-status')).toBe('broken');
    expect(await text('#verification')).toContain('BROKEN at seq 11');
    // The row where verification failed is drawn apart, and named; the rows after it are unverified.
    const failed = page.locator('#terminal-rows tr[data-verification="failed"]');
    expect(await failed.count()).toBe(1);
    expect(await failed.getAttribute('class')).toContain('verification-failed');
    expect(await failed.locator('td').nth(2).textContent()).toContain('FAILED VERIFICATION');
    const background = await failed
      .locator('td')
      .first()
      .evaluate((cell) => (globalThis as unknown as PageGlobals).getComputedStyle(cell).backgroundColor);
    expect(background).toBe('rgb(198, 40, 40)');
    expect(await page.locator('#terminal-rows tr[data-verification="unverified"]').count()).toBeGreaterThan(
      0,
    );
    // Rows before the break are not marked.
    expect(await page.locator('#terminal-rows tr[data-id]:not([data-verification])').count()).toBeGreaterThan(
      0,
    );
  });

  test("the header names the policy's sha256 and the sandbox and network mode", async () => {
    await page.goto(pathToFileURL(html).href);
    await page.waitForSelector('body[data-ready="1"]');
    const servers = await text('#servers');
    expect(servers).toContain(`/etc/termgate/policy.yaml sha256 ${'a'.repeat(64)}`);
    expect(servers).toContain(
      'sandbox: required, network: allowlist: registry.npmjs.org, *.githubusercontent.com',
    );
  });

  test("a person's no is drawn apart from a rule's deny", async () => {
    const { FileAuditSink } = await import('@termgate/audit/adapters');
    const asked = path.join(dir, 'asked.jsonl');
    const sink = FileAuditSink.open(asked);
    const create = (id: string, decision: string, rule: string) => ({
      event: { action: 'terminal-create', reason: `${rule} decided` },
      process: { command_line: `cmd-${id}` },
      rule: { id: [rule] },
      termgate: {
        terminal_id: id,
        decision,
        ...(decision === 'ask' && { approval: { id: `approval-${id}` } }),
      },
    });
    sink.append(create('by-rule', 'deny', 'no-rm'));
    sink.append(create('by-person', 'ask', 'ask-git-push'));
    sink.append({
      event: { action: 'terminal-answer', reason: 'declined by a person' },
      process: { command_line: 'cmd-by-person' },
      termgate: {
        terminal_id: 'by-person',
        decision: 'deny',
        approval: { id: 'approval-by-person', outcome: 'deny' },
      },
    });
    sink.close();
    const out = path.join(dir, 'asked.html');
    expect((await run(['report', asked, '--html', out])).code).toBe(0);
    await page.goto(pathToFileURL(out).href);
    await page.waitForSelector('body[data-ready="1"]');
    const byRule = page.locator('#terminal-rows tr[data-id="by-rule"]');
    const byPerson = page.locator('#terminal-rows tr[data-id="by-person"]');
    expect(await byRule.getAttribute('class')).not.toContain('declined');
    expect(await byPerson.getAttribute('class')).toContain('declined');
    expect(await byPerson.locator('td').nth(2).textContent()).toBe('deny (a person said no)');
    expect(await byRule.locator('td').nth(2).textContent()).toBe('deny');
    const colour = (row: typeof byRule) =>
      row
        .locator('td')
        .first()
        .evaluate((cell) => (globalThis as unknown as PageGlobals).getComputedStyle(cell).backgroundColor);
    expect(await colour(byRule)).toBe('rgb(253, 236, 234)');
    expect(await colour(byPerson)).toBe('rgb(243, 232, 253)');
    expect(await text('#summary-declined')).toBe('1');
    expect(await text('#summary-deny')).toBe('1');
  });

  test('recorded text cannot inject markup into the page', async () => {
    const hostile = path.join(dir, 'hostile.jsonl');
    writeGeneratedTrail(hostile, 1);
    const content = readFileSync(hostile, 'utf8');
    // Rewrite through the real writer: a command that tries to close the data script and run its own.
    const { FileAuditSink } = await import('@termgate/audit/adapters');
    rmSync(hostile);
    const sink = FileAuditSink.open(hostile);
    sink.append({
      event: { action: 'terminal-create' },
      process: {
        command_line: '</script><script>document.title="owned"</script><img src=x onerror=alert(1)>',
      },
      termgate: { terminal_id: 'evil', decision: 'deny' },
    });
    sink.close();
    expect(content.length).toBeGreaterThan(0);
    const out = path.join(dir, 'hostile.html');
    await run(['report', hostile, '--html', out]);
    await page.goto(pathToFileURL(out).href);
    await page.waitForSelector('body[data-ready="1"]');
    expect(await page.title()).toBe('termgate audit report');
    expect(await page.locator('#terminal-rows img').count()).toBe(0);
    expect(await text('#terminal-rows td.command')).toContain('<img src=x onerror=alert(1)>');
  });
});
