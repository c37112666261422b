/**
 * bubblewrap takes another path for root than for everyone else, and CI
 * runs as root. This suite starts `termgate serve` as an unprivileged user
 * (nobody, through util-linux `setpriv`, when the tests run as root; as the
 * tests' own user otherwise) and runs the sandbox's network modes there.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { SERVER_BIN, WireServer } from '../e2e/support/wire-server.js';
import { makeWorld, readText, run, type SandboxWorld } from './support/sandbox-fixture.js';

const asRoot = process.getuid?.() === 0;

function serveUnprivileged(world: SandboxWorld): WireServer {
  for (const dir of [world.root, world.workspace, world.home, path.join(world.root, 'state')])
    chmodSync(dir, 0o777);
  chmodSync(world.policyPath, 0o644);
  const args = ['--policy', world.policyPath, '--audit', world.auditPath];
  const env = { ...process.env, HOME: world.home };
  if (!asRoot) return WireServer.start(args, { cwd: world.workspace, env });
  const readable = spawnSync('setpriv', [
    '--reuid=65534',
    '--regid=65534',
    '--clear-groups',
    '--',
    'test',
    '-r',
    SERVER_BIN,
  ]);
  if (readable.status !== 0) {
    throw new Error(
      `user nobody cannot read ${SERVER_BIN}: this suite needs the checkout readable by other users`,
    );
  }
  return WireServer.start(args, {
    cwd: world.workspace,
    env,
    wrap: ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--'],
  });
}

describe.each([
  ['none', 'none'],
  ['an allowlist', "{ allow: ['127.0.0.2'] }"],
])(
  `sandboxed as an unprivileged user (${asRoot ? 'nobody, via setpriv' : 'this user'}), network: %s`,
  (_n, network) => {
    let world: SandboxWorld;
    let server: WireServer;

    beforeAll(() => {
      world = makeWorld({
        sandbox: ['  mode: required', '  filesystem:', '    privateTmp: false', `  network: ${network}`].join(
          '\n',
        ),
      });
      writeFileSync(path.join(world.workspace, 'in.txt'), 'in\n');
      chmodSync(path.join(world.workspace, 'in.txt'), 0o666);
      server = serveUnprivileged(world);
    });
    afterAll(async () => {
      await server.dispose();
      world.dispose();
    });

    test('commands run, write the workspace and nothing else', async () => {
      const result = await run(
        server,
        `id -u; cp in.txt out.txt && echo x > ${path.join(world.outside, 'nope.txt')}`,
      );
      expect(result.ran).toBe(true);
      expect(result.output.split('\n')[0]).toBe(asRoot ? '65534' : String(process.getuid?.()));
      expect(readText(path.join(world.workspace, 'out.txt'))).toBe('in\n');
      expect(readText(path.join(world.outside, 'nope.txt'))).toBe('');
      expect(result.output).toMatch(/Read-only file system|Permission denied/);
    });

    test('a server in one terminal answers a client in another', async () => {
      const result = await run(
        server,
        'python3 -m http.server 18777 --bind 127.0.0.1 >/dev/null 2>&1 & for i in $(seq 100); do curl -sf -m 2 http://localhost:18777/ >/dev/null && echo reached && break; sleep 0.1; done',
      );
      expect(result.output).toContain('reached');
    });
  },
);
