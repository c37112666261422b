/**
 * The sandbox profile is computed in a thread while the judge works, and
 * fresh for every create: a repository (and so its git dir and run-later
 * entries) that one command makes is protected from the very next one.
 * A real `termgate serve` with the sandbox on; fails if a profile were
 * reused across creates.
 */

import { existsSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { jest } from '@jest/globals';
import { makeWorld, run, type SandboxWorld, serveIn } from './support/sandbox-fixture.js';

jest.setTimeout(120_000);

const SECTION = ['  mode: required', '  filesystem:', '    privateTmp: false', '  network: none'].join('\n');

let w: SandboxWorld;
beforeAll(() => {
  w = makeWorld({ sandbox: SECTION });
});
afterAll(() => w.dispose());

test('a repository planted by one create is read-only for the next: its git dir, its hooks and .husky', async () => {
  const server = serveIn(w);
  try {
    const first = await run(server, 'git init -q planted && echo made');
    expect(first).toMatchObject({ ran: true, output: expect.stringContaining('made') });
    expect(existsSync(path.join(w.workspace, 'planted', '.git', 'config'))).toBe(true);
    const second = await run(
      server,
      [
        'echo "[core] hooksPath = /tmp/evil" >> planted/.git/config 2>/dev/null && echo config-written',
        'echo evil > planted/.git/hooks/pre-commit 2>/dev/null && echo hook-written',
        'mkdir planted/.husky 2>/dev/null && echo husky-made',
        'echo done',
      ].join('; '),
    );
    expect(second.ran).toBe(true);
    expect(second.output).toContain('done');
    expect(second.output).not.toMatch(/config-written|hook-written|husky-made/);
    expect(existsSync(path.join(w.workspace, 'planted', '.git', 'hooks', 'pre-commit'))).toBe(false);
    // A placeholder's mount point may exist on the host; nothing was put in it.
    const husky = path.join(w.workspace, 'planted', '.husky');
    expect(existsSync(husky) ? readdirSync(husky) : []).toEqual([]);
  } finally {
    await server.closeStdin();
  }
});
