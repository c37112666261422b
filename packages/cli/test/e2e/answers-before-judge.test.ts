/**
 * The protocol does not wait for the judge: with a policy whose embedded
 * tests keep the judge's thread busy for seconds, `tools/list` and
 * `server/discover` are answered while it works, and the first
 * `terminal_create` (sent first) is answered only once the judge stands.
 * Fails if listing waited for the policy side.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { jest } from '@jest/globals';
import {
  isResponseTo,
  modern,
  structuredResult,
  type WireMessage,
  WireServer,
} from './support/wire-server.js';

jest.setTimeout(180_000);

let dir: string;
beforeAll(() => {
  dir = mkdtempSync('/var/tmp/termgate-answers-before-judge-');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('tools/list and server/discover answer while the judge still runs the policy tests; the create waits for it', async () => {
  const policy = path.join(dir, 'policy.yaml');
  // Many embedded tests: seconds of work for the judge's thread, none for the main one. Short
  // lines: a long one can run past the parser's time budget on a loaded machine (a deny, so a
  // failing test and a refused start).
  const tests = Array.from(
    { length: 3000 },
    (_, i) => `  - { command: 'echo ${i} | grep ${i}', expect: allow }`,
  );
  writeFileSync(
    policy,
    [
      'default: allow',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a policy placeholder, not a template
      "cwd: { roots: ['${SERVER_CWD}'] }",
      'sandbox: { mode: off }',
      'tests:',
      ...tests,
      '',
    ].join('\n'),
  );
  const server = WireServer.start(['--policy', policy], { cwd: dir });
  try {
    server.send({
      jsonrpc: '2.0',
      id: 'create',
      method: 'tools/call',
      params: modern({ name: 'terminal_create', arguments: { command: 'echo ready' } }),
    });
    server.send({ jsonrpc: '2.0', id: 'discover', method: 'server/discover', params: modern() });
    server.send({ jsonrpc: '2.0', id: 'list', method: 'tools/list', params: modern() });
    const order: string[] = [];
    const seen = (id: string) => (message: WireMessage) => {
      if (isResponseTo(message, id)) order.push(id);
      return isResponseTo(message, id);
    };
    await server.waitFor(seen('list'), 'the tools/list answer', { timeoutMs: 120_000 });
    await server.waitFor(seen('discover'), 'the server/discover answer', { timeoutMs: 120_000 });
    const created = await server.waitFor(seen('create'), 'the create answer', { timeoutMs: 150_000 });
    expect(order).toEqual(['list', 'discover', 'create']);
    expect(structuredResult(created)).toMatchObject({ output: 'ready\n' });
  } finally {
    await server.closeStdin(30_000);
  }
});
