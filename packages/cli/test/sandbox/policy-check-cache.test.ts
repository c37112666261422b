/**
 * The start-up checks (rule examples, embedded tests) run once per policy
 * text and version, remembered in the audit trail's directory: a real
 * `termgate serve` with the sandbox on. What this pins: a policy whose tests
 * fail never starts, whatever a cache holds; an entry is written only by a
 * start whose checks passed; a sandboxed command cannot reach the cache.
 */

import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { jest } from '@jest/globals';
import { POLICY_CHECKS_DIRECTORY, PolicyCheckCache } from '../../src/serve/policy-check-cache.js';
import { TERMGATE_VERSION } from '../../src/version.js';
import { makeWorld, run, type SandboxWorld, serveIn } from './support/sandbox-fixture.js';

jest.setTimeout(120_000);

const SECTION = ['  mode: required', '  filesystem:', '    privateTmp: false', '  network: none'].join('\n');

function writePolicy(world: SandboxWorld, tests: string[]): string {
  const text = [
    'default: allow',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a policy placeholder, not a template
    "cwd: { roots: ['${SERVER_CWD}'] }",
    'rules:',
    '  - { id: no-rm, decision: deny, program: rm }',
    'sandbox:',
    SECTION,
    'tests:',
    ...tests,
    '',
  ].join('\n');
  writeFileSync(world.policyPath, text);
  return text;
}

let w: SandboxWorld;
beforeEach(() => {
  w = makeWorld({ sandbox: SECTION });
});
afterEach(() => w.dispose());

const checks = (): string => path.join(path.dirname(w.auditPath), POLICY_CHECKS_DIRECTORY);

test('a passing start records its entry (owner-only); a failing policy is refused with or without one', async () => {
  const passing = writePolicy(w, ["  - { command: 'rm x', expect: deny }"]);
  const server = serveIn(w);
  try {
    const ran = await run(server, 'echo hi');
    expect(ran).toMatchObject({ ran: true, output: 'hi\n' });
    // The cache lies in the hidden trail directory: a command sees nothing there.
    const peek = await run(server, `ls -a ${checks()} 2>&1; echo planted > ${checks()}/x 2>&1; echo done`);
    expect(peek.output).not.toMatch(/[0-9a-f]{64}/);
  } finally {
    await server.closeStdin();
  }
  const cache = PolicyCheckCache.in(path.dirname(w.auditPath), TERMGATE_VERSION);
  const entry = path.join(checks(), cache.key(passing));
  expect(statSync(entry).mode & 0o777).toBe(0o600);
  expect(statSync(checks()).mode & 0o777).toBe(0o700);
  expect(readdirSync(checks())).toEqual([cache.key(passing)]);

  // The same policy with a failing test: another text, another key; the old entry does not help.
  const failing = writePolicy(w, [
    "  - { command: 'rm x', expect: deny }",
    "  - { command: 'rm y', expect: allow }",
  ]);
  // An entry planted for the failing text, but not the server's own (group-writable): ignored.
  mkdirSync(checks(), { recursive: true });
  writeFileSync(path.join(checks(), cache.key(failing)), cache.key(failing), { mode: 0o664 });
  const proof = path.join(w.workspace, 'ran.txt');
  const refused = serveIn(w);
  refused.send({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'terminal_create', arguments: { command: `echo ran > ${proof}` } },
  });
  const exit = await refused.untilExit(60_000);
  expect(exit.code).toBe(1);
  expect(refused.stderr).toMatch(/refusing to start: .*1 embedded test\(s\) of .* failed/s);
  expect(existsSync(proof)).toBe(false);
});
