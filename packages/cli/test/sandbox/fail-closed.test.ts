/**
 * `serve` refuses to start, before any command can run, when a layer of the
 * sandbox cannot be set up or a protection cannot hold: an identity that is
 * missing or root, and an audit trail lying inside a writable directory.
 */
import * as path from 'node:path';
import { WireServer } from '../e2e/support/wire-server.js';
import { makeWorld, type SandboxWorld } from './support/sandbox-fixture.js';

const asRoot = process.getuid?.() === 0;

async function refusal(world: SandboxWorld, auditPath = world.auditPath): Promise<string> {
  const server = WireServer.start(['--policy', world.policyPath, '--audit', auditPath], {
    cwd: world.workspace,
    env: { ...process.env, HOME: world.home },
  });
  const exit = await server.untilExit();
  expect(exit.code).toBe(1);
  return server.stderr;
}

describe('serve fails closed', () => {
  const worlds: SandboxWorld[] = [];
  const world = (sandbox: string): SandboxWorld => {
    const made = makeWorld({ sandbox });
    worlds.push(made);
    return made;
  };
  afterAll(() => {
    for (const w of worlds) w.dispose();
  });

  test('a trail that lies inside a writable directory is refused at start', async () => {
    const w = world(['  mode: required', '  network: none'].join('\n'));
    const stderr = await refusal(w, path.join(w.workspace, 'logs', 'audit.jsonl'));
    expect(stderr).toMatch(
      /the audit trail's directory .* lies inside the sandbox's writable directory .*ws/,
    );
  });

  (asRoot ? test : test.skip)(
    'as root, a sandbox user that does not exist stops the start and names the fix',
    async () => {
      const w = world(['  mode: required', '  user: termgate-no-such-user', '  network: none'].join('\n'));
      const stderr = await refusal(w);
      expect(stderr).toMatch(/termgate-no-such-user.*does not exist/);
      expect(stderr).toMatch(/useradd --system/);
    },
  );

  (asRoot ? test : test.skip)('as root, root as the sandbox user is refused', async () => {
    const w = world(['  mode: required', '  user: root', '  network: none'].join('\n'));
    expect(await refusal(w)).toMatch(/uid 0 .*root to the kernel/);
  });

  test('an invalid limit is refused by the schema', async () => {
    const w = world(['  mode: required', 'limits:', '  processes: 2'].join('\n'));
    expect(await refusal(w)).toMatch(/processes/);
  });
});
