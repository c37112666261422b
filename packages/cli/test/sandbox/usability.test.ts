/**
 * What a developer does keeps working under the shipped default policy with
 * every kernel layer on (the identity as root, the filter, the limits): git,
 * make and a C compiler, node, python3 multiprocessing, npm install, a dev
 * server reached from another terminal, an HTTP fetch through the proxy;
 * and what a command writes stays usable by the workspace's owner.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import * as path from 'node:path';
import { DEFAULT_POLICY, pause, WireServer } from '../e2e/support/wire-server.js';
import { call, makeWorld, readText, run, type SandboxWorld, start } from './support/sandbox-fixture.js';

const asRoot = process.getuid?.() === 0;

describe('under the shipped default policy, with the kernel layers', () => {
  let world: SandboxWorld;
  let server: WireServer;
  let host: Server;
  let hostPort = 0;

  beforeAll(async () => {
    world = makeWorld({ sandbox: null });
    // The default policy, plus one allowlisted address for a local fetch through the proxy.
    const policyPath = path.join(world.root, 'default-plus-local.yaml');
    const text = readFileSync(DEFAULT_POLICY, 'utf8');
    const widened = text.replace(/^( {2}network:\n {4}allow:\n)/m, '$1      - 127.0.0.2\n');
    expect(widened).not.toBe(text);
    writeFileSync(policyPath, widened);
    // A one-package npm registry on the allowlisted address: `npm install` reaches it only through the
    // proxy (127.0.0.2 is not in NO_PROXY), with the terminal's proxy credential from its proxy URL.
    const pkgDir = path.join(world.root, 'registry', 'package');
    execFileSync('mkdir', ['-p', pkgDir]);
    writeFileSync(
      path.join(pkgDir, 'package.json'),
      JSON.stringify({ name: 'proxied-pkg', version: '1.0.0', main: 'index.js' }),
    );
    writeFileSync(path.join(pkgDir, 'index.js'), 'module.exports = "through the proxy";\n');
    const tarball = execFileSync('tar', ['-czf', '-', '-C', path.dirname(pkgDir), 'package']);
    const integrity = `sha512-${createHash('sha512').update(tarball).digest('base64')}`;
    host = createServer((req, res) => {
      const base = `http://127.0.0.2:${hostPort}`;
      if (req.url === '/proxied-pkg') {
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            name: 'proxied-pkg',
            'dist-tags': { latest: '1.0.0' },
            versions: {
              '1.0.0': {
                name: 'proxied-pkg',
                version: '1.0.0',
                main: 'index.js',
                dist: { tarball: `${base}/proxied-pkg/-/proxied-pkg-1.0.0.tgz`, integrity },
              },
            },
          }),
        );
      } else if (req.url === '/proxied-pkg/-/proxied-pkg-1.0.0.tgz') {
        res.setHeader('content-type', 'application/octet-stream');
        res.end(tarball);
      } else {
        res.end('served by the host\n');
      }
    });
    await new Promise<void>((resolve) => host.listen(0, '127.0.0.2', resolve));
    hostPort = (host.address() as { port: number }).port;
    const git = (...args: string[]): void => {
      execFileSync('git', ['-C', world.workspace, ...args], { stdio: 'ignore' });
    };
    writeFileSync(
      path.join(world.workspace, 'hello.c'),
      '#include <stdio.h>\nint main(void){puts("compiled");return 0;}\n',
    );
    writeFileSync(path.join(world.workspace, 'Makefile'), 'hello: hello.c\n\tcc -o hello hello.c\n');
    git('add', '.');
    git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'first');
    writeFileSync(
      path.join(world.workspace, 'hello.c'),
      `${readText(path.join(world.workspace, 'hello.c'))}// changed\n`,
    );
    execFileSync('mkdir', ['-p', path.join(world.workspace, 'localpkg')]);
    writeFileSync(
      path.join(world.workspace, 'localpkg', 'package.json'),
      JSON.stringify({ name: 'localpkg', version: '1.0.0', main: 'index.js' }),
    );
    writeFileSync(path.join(world.workspace, 'localpkg', 'index.js'), 'module.exports = "from localpkg";\n');
    server = WireServer.start(['--policy', policyPath, '--audit', world.auditPath], {
      cwd: world.workspace,
      env: { ...process.env, HOME: world.home },
    });
  }, 60_000);
  afterAll(async () => {
    await server.dispose();
    host.close();
    world.dispose();
  });

  test('git status, log and diff', async () => {
    const result = await run(server, 'git status --short; git log --oneline | wc -l; git diff --stat');
    expect(result.exitCode).toBe(0);
    expect(result.output).toMatch(/ M hello\.c/);
    expect(result.output).toMatch(/^1$/m);
    expect(result.output).toMatch(/hello\.c \| 1 \+/);
    expect(result.output).not.toMatch(/dubious ownership/);
  });

  test('make runs the C compiler; the binary runs; the owner can use what was written', async () => {
    const result = await run(server, 'make && ./hello && id -un', { timeoutSeconds: 60 });
    expect(result.exitCode).toBe(0);
    expect(result.output).toContain('compiled');
    if (asRoot) {
      expect(result.output).toMatch(/termgate-sandbox/);
      // The file belongs to the sandbox user, and its ACL keeps it read-write for the workspace's owner.
      const acl = execFileSync('getfacl', ['-cn', path.join(world.workspace, 'hello')], { encoding: 'utf8' });
      expect(acl).toMatch(/^user:0:rw/m);
      expect(acl).toMatch(/^mask::rw/m);
    }
  }, 90_000);

  test('node and python3 multiprocessing', async () => {
    const result = await run(
      server,
      `node -e "console.log('node', 6*7)" && python3 -c "
import multiprocessing as mp
if __name__ == '__main__':
    with mp.Pool(3) as p: print('pool', sum(p.map(abs, [-1, -2, -3])))
"`,
      { timeoutSeconds: 60 },
    );
    expect(result.exitCode).toBe(0);
    expect(result.output).toMatch(/node 42/);
    expect(result.output).toMatch(/pool 6/);
  }, 90_000);

  test('npm install of a local package', async () => {
    const result = await run(
      server,
      'npm install --no-audit --no-fund ./localpkg 2>&1 && node -p "require(\'localpkg\')"',
      {
        timeoutSeconds: 120,
      },
    );
    expect(result.exitCode).toBe(0);
    expect(result.output).toContain('from localpkg');
  }, 150_000);

  test('python3 -m http.server in one terminal answers curl in another', async () => {
    const port = 18000 + (process.pid % 1000);
    const id = await start(server, `python3 -m http.server ${port} --bind 127.0.0.1`);
    try {
      let output = '';
      for (let i = 0; i < 40 && !/Directory listing/.test(output); i++) {
        await pause(250);
        output = (await run(server, `curl -s http://127.0.0.1:${port}/`)).output;
      }
      expect(output).toMatch(/Directory listing/);
    } finally {
      await call(server, 'terminal_release', { terminalId: id });
    }
  }, 60_000);

  test('npm install from a registry through the proxy', async () => {
    const result = await run(
      server,
      `mkdir -p viaproxy && cd viaproxy && npm install --no-audit --no-fund --registry http://127.0.0.2:${hostPort}/ proxied-pkg 2>&1 && node -p "require('proxied-pkg')"`,
      { timeoutSeconds: 120 },
    );
    expect(result.output).toContain('through the proxy');
    expect(result.exitCode).toBe(0);
    // It went through the proxy, with the terminal's credential: the trail has the allowed connection.
    const allowed = readText(world.auditPath)
      .split('\n')
      .filter((line) => line.includes('"network-allowed"'))
      .map((line) => JSON.parse(line) as { destination?: { address?: string; port?: number } });
    expect(allowed.map((r) => r.destination)).toContainEqual(expect.objectContaining({ port: hostPort }));
  }, 150_000);

  test('an HTTP fetch through the proxy reaches an allowlisted host', async () => {
    const result = await run(server, `curl -sS http://127.0.0.2:${hostPort}/`);
    expect(result.output).toContain('served by the host');
  });
});
