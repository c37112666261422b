/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`,
 * pinned 0.2.0-alpha.12) in server mode against `termgate serve --http`,
 * for both requirement sets it has: 2026-07-28 (stateless, per-request
 * `_meta`) and 2025-11-25 (`initialize`, `Mcp-Session-Id`).
 *
 * Every check of every scenario is read from the suite's `checks.json`: a
 * check that fails must be one that cannot apply to a tools-only server
 * (`support/conformance-not-applicable.ts`, each with its reason), an entry
 * there that passes is stale and fails the test, and the applicable
 * scenarios must all have run. The suite needs Node 22 or later (it uses
 * `fs.globSync`): this file is in the lane `pnpm test` runs on Node 22, and
 * fails, not skips, on an older Node.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { MUST_PASS, NOT_APPLICABLE } from './support/conformance-not-applicable.js';
import { HttpServer } from './support/http-server.js';
import { defaultPolicyArgs, REPO_ROOT, removeAuditFiles } from './support/wire-server.js';

const SUITE = path.join(REPO_ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

interface Check {
  readonly id: string;
  readonly status: string;
  readonly errorMessage?: string;
}

/** Runs the suite for one requirement set; resolves with each scenario's checks. */
async function runSuite(url: string, revision: string): Promise<Map<string, Check[]>> {
  const out = mkdtempSync(path.join(tmpdir(), 'termgate-conformance-'));
  try {
    const child = spawn(
      process.execPath,
      [SUITE, 'server', '--url', url, '--requirements', revision, '-o', out],
      {
        cwd: out,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let log = '';
    child.stdout.on('data', (chunk: Buffer) => {
      log += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      log += chunk.toString();
    });
    // Its exit code is 1 whenever a check fails, applicable or not: the checks are judged below.
    await new Promise((resolve) => child.once('exit', resolve));
    const scenarios = new Map<string, Check[]>();
    for (const entry of readdirSync(out)) {
      const file = path.join(out, entry, 'checks.json');
      if (!existsSync(file)) continue;
      const name = entry.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T.*$/, '');
      scenarios.set(name, JSON.parse(readFileSync(file, 'utf8')) as Check[]);
    }
    if (scenarios.size === 0) throw new Error(`the conformance suite produced no results:\n${log}`);
    return scenarios;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

const failing = (checks: readonly Check[]) => checks.filter((check) => check.status === 'FAILURE');

/** The failures no entry explains, and the entries that explain nothing (stale). */
function judge(scenarios: Map<string, Check[]>): { unexplained: string[]; stale: string[] } {
  const unexplained: string[] = [];
  const stale: string[] = [];
  for (const [scenario, checks] of scenarios) {
    const entry = NOT_APPLICABLE[scenario];
    const failed = failing(checks);
    if (entry === undefined) {
      for (const check of failed) unexplained.push(`${scenario}: ${check.id}: ${check.errorMessage ?? ''}`);
      continue;
    }
    if (entry.checks === 'all') {
      if (failed.length === 0) stale.push(`${scenario} (listed as not applicable, but every check passed)`);
      continue;
    }
    for (const check of failed) {
      if (!entry.checks.includes(check.id))
        unexplained.push(`${scenario}: ${check.id}: ${check.errorMessage ?? ''}`);
    }
    for (const id of entry.checks) {
      const check = checks.find((c) => c.id === id);
      if (check !== undefined && check.status !== 'FAILURE')
        stale.push(`${scenario}: ${id} (listed, but ${check.status})`);
    }
  }
  return { unexplained, stale };
}

describe('the official MCP conformance suite against termgate serve --http', () => {
  let server: HttpServer;

  beforeAll(async () => {
    const major = Number(process.versions.node.split('.')[0]);
    if (major < 22) {
      throw new Error(
        `the conformance suite needs Node 22 or later, this is ${process.version}: run this file with scripts/test-on-node.mjs 22`,
      );
    }
    server = await HttpServer.start(defaultPolicyArgs(false));
  });

  afterAll(async () => {
    await server?.stop();
    removeAuditFiles();
  });

  test.each(['2026-07-28', '2025-11-25'] as const)(
    'requirement set %s: every applicable check passes; only the listed ones fail',
    async (revision) => {
      const scenarios = await runSuite(server.url, revision);
      const { unexplained, stale } = judge(scenarios);
      expect(unexplained).toEqual([]);
      expect(stale).toEqual([]);
      for (const scenario of MUST_PASS[revision]) {
        expect([scenario, scenarios.has(scenario)]).toEqual([scenario, true]);
        const checks = scenarios.get(scenario) ?? [];
        expect(checks.some((check) => check.status === 'SUCCESS')).toBe(true);
      }
    },
    300_000,
  );
});
