/**
 * Issue 28's planted names, through the real `termgate acp-proxy`: dangling
 * links at every segment name of the next seconds (segment names are
 * stamped to the millisecond) do not stop the trail. Each rotation moves to
 * a free name, records the tampering, and the trail verifies as one chain.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import * as path from 'node:path';
import { rotatedPath } from '@termgate/audit';
import { assertServerBuilt, defaultPolicyArgs, SERVER_BIN } from '../e2e/support/wire-server.js';
import { RawProxy, terminalRequest } from '../hostile/support/raw-proxy.js';

beforeAll(() => assertServerBuilt());

const CREATES = 4;
/** Planted names cover this long from the moment they are planted. */
const COVER_MS = 15_000;

test('dangling links at the next segment names: every create runs, the tampering is recorded, the trail verifies', async () => {
  const steps = [
    { waitFor: '"method":"marker/go"' },
    ...Array.from({ length: CREATES }, (_, n) => [
      { send: terminalRequest(String(n + 1), 'create', { command: 'true' }) },
      { waitFor: `"id":${n + 1},` },
    ]).flat(),
  ];
  // Every record starts a new segment.
  const proxy = RawProxy.start(steps, [], [...defaultPolicyArgs(false), '--audit-rotate-size', '1']);
  try {
    await proxy.until(() => (existsSync(proxy.auditPath) ? true : undefined), 'the trail', 15_000);
    const dir = path.dirname(proxy.auditPath);
    const nowhere = path.join(dir, 'nowhere');
    const start = Date.now();
    for (let at = start; at < start + COVER_MS; at += 1) {
      symlinkSync(path.join(nowhere, String(at)), rotatedPath(proxy.auditPath, new Date(at)));
    }
    proxy.editorIn.write('{"jsonrpc":"2.0","method":"marker/go","params":{}}\n');
    for (let n = 1; n <= CREATES; n += 1) {
      const answer = JSON.parse(await proxy.agentLine(`"id":${n},`, 30_000));
      if (answer.result === undefined) throw new Error(JSON.stringify(answer));
      expect(answer.result).toMatchObject({ terminalId: expect.any(String) });
    }
    expect(existsSync(nowhere)).toBe(false);
    const segments = readdirSync(dir).filter(
      (name) => /^audit\.\d{8}T\d{9}Z(-\d+)?\.jsonl$/.test(name) && lstatSync(path.join(dir, name)).isFile(),
    );
    const text = segments.map((name) => readFileSync(path.join(dir, name), 'utf8')).join('');
    // Each segment started within the planted window took the next free name, and said why.
    const stamp = (at: number) => path.basename(rotatedPath(proxy.auditPath, new Date(at)));
    const windowEnd = stamp(start + COVER_MS);
    const inWindow = segments.filter((name) => name >= stamp(start) && name < windowEnd);
    expect(inWindow.length).toBeGreaterThan(0);
    for (const name of inWindow) expect(name).toMatch(/Z-\d+\.jsonl$/);
    expect(text.match(/"action":"audit-tampering"/g)?.length ?? 0).toBeGreaterThanOrEqual(1);
    const verdict = spawnSync(process.execPath, [SERVER_BIN, 'audit', 'verify', dir], { encoding: 'utf8' });
    expect([verdict.status, verdict.stdout]).toEqual([
      0,
      expect.stringMatching(/: intact, \d+ records in \d+ files/),
    ]);
  } finally {
    await proxy.dispose();
  }
}, 120_000);
