/**
 * The Landlock tier in a real container (issue #24's "Done when"): `termgate
 * serve` inside podman (support/podman-container.ts: the machine's own
 * files, no image, no --privileged, no added capability, a seccomp profile
 * that refuses user namespaces as Docker's default does), under the shipped
 * default policy, driven by a real client over stdio. `auto` must take the
 * Landlock tier and name it in the trail; the developer workload runs; the
 * tier's promises hold against attacks, checked on the host. If podman
 * cannot run a container here, the test fails: it never skips.
 */

import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import * as path from 'node:path';
import { REPO_ROOT, WireServer } from '../e2e/support/wire-server.js';
import { type Container, podmanContainer } from './support/podman-container.js';
import { auditRecords, makeWorld, py, run, type SandboxWorld } from './support/sandbox-fixture.js';

describe('termgate serve in a podman container that refuses user namespaces, shipped default policy', () => {
  let world: SandboxWorld;
  let container: Container;
  let server: WireServer;
  let listener: Server;
  let port = 0;
  let accepted = 0;

  beforeAll(async () => {
    world = makeWorld({ sandbox: null });
    writeFileSync(path.join(world.workspace, 'Makefile'), 'all:\n\techo built > source.txt\n');
    listener = createServer((socket) => {
      accepted++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    port = (listener.address() as { port: number }).port;
    container = podmanContainer({ cwd: world.workspace, home: world.home, repo: REPO_ROOT });
    server = WireServer.start(
      ['--policy', path.join(REPO_ROOT, 'policies', 'default.yaml'), '--audit', world.auditPath],
      { cwd: world.workspace, env: { ...process.env, ...container.env }, wrap: container.wrap },
    );
  }, 180_000);

  afterAll(async () => {
    await server?.dispose();
    listener?.close();
    container?.dispose();
    world?.dispose();
  });

  test('auto takes the landlock tier, named in the trail, and the workload runs', async () => {
    const node = await run(server, `node -e 'console.log("node", 6 * 7)'`, { timeoutSeconds: 60 });
    expect(node.output).toContain('node 42');
    const start = auditRecords(world).find(
      (r) => (r.event as { action?: string }).action === 'server-start',
    ) as { termgate: { sandbox: { layers: Record<string, string> } } } | undefined;
    expect(start?.termgate.sandbox.layers.tier).toMatch(
      /^landlock .*chosen by auto: the namespaces tier cannot run here/,
    );
    expect((await run(server, py('print("python", 2 + 2)'))).output).toContain('python 4');
    expect((await run(server, 'git status --short; echo git=$?')).output).toContain('git=0');
    expect((await run(server, 'make')).exitCode).toBe(0);
    expect(readFileSync(path.join(world.workspace, 'source.txt'), 'utf8')).toBe('built\n');
    expect((await run(server, 'npm --version')).exitCode).toBe(0);
    const refused = await run(
      server,
      'curl -sS -m 10 -o /dev/null -w "%{http_code}" https://refused.invalid/',
    );
    expect(refused.output).toMatch(/403/);
  });

  test('the promises hold inside the container: writes, reads, network, processes, identity', async () => {
    const target = path.join(world.outside, 'target.txt');
    const attacks = [
      `echo pwned > ${target}`,
      py('open(".git/config", "a").write("evil")'),
      'cat "$HOME/.bashrc"',
      py(`import socket; socket.create_connection(("127.0.0.1", ${port}), 5); print("CONNECTED")`),
      py('import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM); print("CONNECTED")'),
      'kill -0 1 && echo SIGNALLED',
      'id -u; grep NoNewPrivs /proc/self/status',
    ];
    let output = '';
    for (const attack of attacks) {
      const r = await run(server, attack);
      // Each ran: the kernel, not the gate, held the line.
      expect(r.ran).toBe(true);
      output += r.output;
    }
    const out = { output };
    expect(readFileSync(target, 'utf8')).toBe('original\n');
    expect(readFileSync(path.join(world.workspace, '.git', 'config'), 'utf8')).not.toContain('evil');
    expect(out.output).not.toContain('# bashrc');
    expect(out.output).not.toContain('CONNECTED');
    expect(accepted).toBe(0);
    expect(out.output).not.toContain('SIGNALLED');
    expect(out.output).not.toMatch(/^0$/m);
    expect(out.output).toMatch(/NoNewPrivs:\s+1/);
  });
});
