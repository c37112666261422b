/**
 * The Landlock tier (docs/SANDBOX-TIERS.md), under the simulation of a host
 * that refuses user namespaces (support/refuse-userns.ts: the seccomp rule
 * of Docker's and podman's default profiles), so `auto` must choose it.
 * Each promise of the README's tier table that this tier holds is attacked
 * here, served as root and as an unprivileged user, and checked on the host,
 * not by the command's word.
 */

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createTcpServer, type Server } from 'node:net';
import * as path from 'node:path';
import { modern, WireServer } from '../e2e/support/wire-server.js';

const REPO_ROOT = path.resolve(import.meta.dirname, '..', '..', '..', '..');

import { AS_ROOT, asIdentity, IDENTITIES, type Identity, openWorld } from './support/identity.js';
import { REFUSE_USERNS } from './support/refuse-userns.js';
import {
  auditRecords,
  call,
  makeWorld,
  processesWith,
  py,
  run,
  type SandboxWorld,
  start,
} from './support/sandbox-fixture.js';

/** `termgate serve` in the world, as `identity`, with user namespaces refused. */
function serveRefused(world: SandboxWorld, identity: Identity): WireServer {
  const wrap = asIdentity(identity);
  if (wrap.length > 0) openWorld(world);
  return WireServer.start(['--policy', world.policyPath, '--audit', world.auditPath], {
    cwd: world.workspace,
    env: { ...process.env, HOME: world.home },
    wrap: [...REFUSE_USERNS, ...wrap],
  });
}

/** A TCP listener on the host's loopback that counts the connections it accepted. */
function tcpListener(): Promise<{ server: Server; port: number; accepted: () => number }> {
  let count = 0;
  const server = createTcpServer((socket) => {
    count++;
    socket.destroy();
  });
  return new Promise((resolve) => {
    server.listen({ host: '127.0.0.1', port: 0 }, () => {
      const address = server.address() as { port: number };
      resolve({ server, port: address.port, accepted: () => count });
    });
  });
}

/** A Unix socket listener (a path, or an abstract name starting with NUL) that counts its connections. */
function unixListener(where: string): Promise<{ server: Server; accepted: () => number }> {
  let count = 0;
  const server = createTcpServer((socket) => {
    count++;
    socket.destroy();
  });
  return new Promise((resolve) => server.listen(where, () => resolve({ server, accepted: () => count })));
}

function serverStart(world: SandboxWorld): Record<string, string> {
  const record = auditRecords(world).find(
    (r) => (r.event as { action?: string }).action === 'server-start',
  ) as { termgate: { sandbox: { layers: Record<string, string> } } } | undefined;
  if (record === undefined) throw new Error('no server-start record');
  return record.termgate.sandbox.layers;
}

describe.each(IDENTITIES)('the landlock tier, user namespaces refused, served as %s', (identity) => {
  let world: SandboxWorld;
  let server: WireServer;
  let tcp: Awaited<ReturnType<typeof tcpListener>>;
  let unix: Awaited<ReturnType<typeof unixListener>>;
  let abstract: Awaited<ReturnType<typeof unixListener>>;
  const abstractName = `termgate-landlock-${process.pid}-${identity}`;
  let hiddenFile: string;

  beforeAll(async () => {
    world = makeWorld({ sandbox: null });
    hiddenFile = path.join(world.outside, 'hidden', 'token');
    mkdirSync(path.dirname(hiddenFile));
    writeFileSync(hiddenFile, `${world.secret}-hidden\n`);
    writeFileSync(
      world.policyPath,
      [
        'default: allow',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a policy placeholder, not a template
        "cwd: { roots: ['${SERVER_CWD}'] }",
        'sandbox:',
        '  mode: required',
        '  filesystem:',
        `    hidden: ['${path.dirname(hiddenFile)}']`,
        "  network: { allow: ['allowed.invalid'] }",
        // Low enough to hit (the defaults are 1024 processes and 4096 MiB).
        'limits:',
        '  processes: 200',
        '  memoryMiB: 256',
        '',
      ].join('\n'),
    );
    tcp = await tcpListener();
    unix = await unixListener(path.join(world.outside, 'host.sock'));
    abstract = await unixListener(`\0${abstractName}`);
    server = serveRefused(world, identity);
    // The first verb waits for the gate, so the server-start record is written once it answered.
    const first = await run(server, 'true');
    if (first.exitCode !== 0)
      throw new Error(`the first command failed: ${first.output}\n${server.diagnostics()}`);
  });

  afterAll(async () => {
    await server?.dispose();
    for (const s of [tcp?.server, unix?.server, abstract?.server]) s?.close();
    world?.dispose();
  });

  test('auto chose the landlock tier, and the server-start record says so and why', () => {
    const layers = serverStart(world);
    expect(layers.tier).toMatch(
      /^landlock \(Landlock ABI \d+, no_new_privs, seccomp; no namespaces\); chosen by auto: the namespaces tier cannot run here/,
    );
    expect(server.stderr).toMatch(/sandbox on \(landlock tier\)/);
  });

  test("tools/list tells the agent how this tier's refusals look, not the namespaces tier's", async () => {
    const response = await server.request('tools/list', modern());
    const tools = (response.result as { tools: { name: string; description: string }[] }).tools;
    const create = tools.find((t) => t.name === 'terminal_create');
    expect(create?.description).toContain('Permission denied');
    expect(create?.description).toContain('/tmp is not writable');
    expect(create?.description).not.toContain('Read-only file system');
  });

  test('writes: nothing outside the workspace and TMPDIR, whatever program writes', async () => {
    const target = path.join(world.outside, 'target.txt');
    const attacks = [
      `echo pwned > ${target}`,
      `sed -i s/original/pwned/ ${target}`,
      py(`open("${target}", "w").write("pwned")`),
      `node -e 'require("fs").writeFileSync("${target}", "pwned")'`,
      `cp ${path.join(world.workspace, 'source.txt')} ${path.join(world.outside, 'planted')}`,
      'echo pwned > /var/tmp/termgate-landlock-planted',
      'echo pwned > /tmp/termgate-landlock-planted',
    ];
    for (const attack of attacks) await run(server, attack);
    expect(readFileSync(target, 'utf8')).toBe('original\n');
    expect(existsSync(path.join(world.outside, 'planted'))).toBe(false);
    expect(existsSync('/var/tmp/termgate-landlock-planted')).toBe(false);
    expect(existsSync('/tmp/termgate-landlock-planted')).toBe(false);
    const ok = await run(
      server,
      `echo changed > source.txt && ${py('import os; p = os.environ["TMPDIR"] + "/f"; open(p, "w").write("in-tmp"); print(open(p).read())')}`,
    );
    expect(ok.output).toContain('in-tmp');
    expect(readFileSync(path.join(world.workspace, 'source.txt'), 'utf8')).toBe('changed\n');
  });

  test("writes: the workspace's git dir stays read-only (config, hooks, moving it aside)", async () => {
    const config = readFileSync(path.join(world.workspace, '.git', 'config'), 'utf8');
    await run(server, 'echo "[core] fsmonitor = evil" >> .git/config');
    await run(server, 'mkdir -p .git/hooks; echo evil > .git/hooks/pre-commit');
    await run(server, 'mv .git moved-git');
    await run(server, 'echo evil > .husky-planted; mkdir .husky');
    expect(readFileSync(path.join(world.workspace, '.git', 'config'), 'utf8')).toBe(config);
    expect(existsSync(path.join(world.workspace, '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(existsSync(path.join(world.workspace, 'moved-git'))).toBe(false);
    expect(existsSync(path.join(world.workspace, '.husky'))).toBe(false);
  });

  test('reads: HOME shows nothing unlisted, hidden paths and /etc/shadow stay unreadable', async () => {
    const read = await run(
      server,
      `cat "$HOME/.ssh/id_rsa"; cat ${hiddenFile}; ls ${path.dirname(hiddenFile)}; cat /etc/shadow; ${py(`print(open("${hiddenFile}").read())`)}`,
    );
    expect(read.ran).toBe(true);
    expect(read.output).not.toContain(world.secret);
    expect(read.output).not.toMatch(/^root:/m);
    const view = await run(server, 'cat /etc/hostname && ls /usr/bin/env');
    expect(view.exitCode).toBe(0);
  });

  test('sockets: no host Unix socket, by path or abstract name', async () => {
    const hostSock = path.join(world.outside, 'host.sock');
    const out = await run(
      server,
      [
        py(`import socket; s = socket.socket(socket.AF_UNIX); s.connect("${hostSock}"); print("CONNECTED")`),
        py(
          `import socket; s = socket.socket(socket.AF_UNIX); s.connect("\\0${abstractName}"); print("CONNECTED")`,
        ),
        `socat -u OPEN:/dev/null UNIX-CONNECT:${hostSock} && echo CONNECTED`,
        py('import socket; a, b = socket.socketpair(); a.send(b"x"); print("pair", b.recv(1))'),
      ].join('; '),
    );
    expect(out.output).not.toContain('CONNECTED');
    expect(out.output).toContain("pair b'x'");
    expect(unix.accepted()).toBe(0);
    expect(abstract.accepted()).toBe(0);
  });

  test('network: only the proxy; no other TCP port, no UDP, MPTCP, SCTP or TCP Fast Open', async () => {
    const port = tcp.port;
    const attacks = [
      py(`import socket; s = socket.create_connection(("127.0.0.1", ${port}), 5); print("CONNECTED")`),
      `curl -sS --noproxy '*' -m 5 http://127.0.0.1:${port}/ && echo CONNECTED`,
      py(
        `import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b"x", ("127.0.0.1", ${port})); print("CONNECTED")`,
      ),
      py(
        `import socket; s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262); s.connect(("127.0.0.1", ${port})); print("CONNECTED")`,
      ),
      py(
        `import socket; s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 132); s.connect(("127.0.0.1", ${port})); print("CONNECTED")`,
      ),
      py(
        `import socket; s = socket.socket(socket.AF_INET, socket.SOCK_STREAM); s.sendto(b"x", 0x20000000, ("127.0.0.1", ${port})); print("CONNECTED")`,
      ),
      py(
        `import socket; s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM); s.connect(("::ffff:127.0.0.1", ${port})); print("CONNECTED")`,
      ),
      py('import socket; s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW); print("CONNECTED")'),
      py(
        `import socket; s = socket.socket(socket.AF_INET, socket.SOCK_STREAM); s.bind(("127.0.0.1", 0)); s.listen(); print("CONNECTED")`,
      ),
    ];
    const outputs: string[] = [];
    for (const attack of attacks) outputs.push((await run(server, attack)).output);
    for (const output of outputs) expect(output).not.toContain('CONNECTED');
    expect(tcp.accepted()).toBe(0);
    const refused = await run(
      server,
      'curl -sS -m 10 -o /dev/null -w "%{http_code}" https://refused.invalid/',
    );
    expect(refused.output).toMatch(/403/);
    const records = auditRecords(world).filter(
      (r) => (r.event as { action?: string }).action === 'network-refused',
    );
    expect(records.length).toBeGreaterThan(0);
  });

  test('processes: no signal to, and no /proc of, the server or another terminal', async () => {
    const other = await start(server, 'sleep 30');
    const pid = server.pid;
    const out = await run(
      server,
      `kill -0 ${pid} && echo SIGNALLED; cat /proc/${pid}/environ | tr "\\0" "\\n" | head -3; echo INJECTED > /proc/${pid}/fd/1 && echo LISTED; cat /proc/${pid}/fd/0 && echo LISTED; pkill -f "^sleep 30$" ; ${py(`import os; os.kill(${pid}, 0); print("SIGNALLED")`)}`,
    );
    expect(out.output).not.toContain('SIGNALLED');
    expect(out.output).not.toContain('LISTED');
    expect(out.output).not.toMatch(/PATH=|HOME=/);
    const still = await call(server, 'terminal_output', { terminalId: other });
    // Still running: the pkill above could not reach it.
    expect(JSON.stringify(still)).toContain('\\"exitStatus\\":null');
    await call(server, 'terminal_kill', { terminalId: other });
    await call(server, 'terminal_release', { terminalId: other });
  });

  // Served as root, termgate can make a cgroup per terminal (the unprivileged case has none: process group only).
  if (identity === 'root') {
    test('processes: a setsid child ends with its terminal (a cgroup per terminal)', async () => {
      expect(serverStart(world).processes).toMatch(/^a cgroup per terminal/);
      const line = 'sleep 4243';
      await run(server, `setsid -f ${line}; echo started`);
      for (let i = 0; i < 100 && processesWith(line).length > 0; i++)
        await new Promise((r) => setTimeout(r, 100));
      expect(processesWith(line)).toEqual([]);
    });
  }

  test('limits: a fork bomb is capped inside its terminal, a 1 GiB allocation fails under 256 MiB', async () => {
    const bomb = await run(
      server,
      py(
        'import os,time\nn=0\ntry:\n  while n<3000:\n    if os.fork()==0:\n      time.sleep(30); os._exit(0)\n    n+=1\nexcept OSError as e:\n  print("capped at", n, e.strerror, flush=True)\nos.killpg(0,9)',
      ),
      { timeoutSeconds: 60 },
    );
    const capped = /capped at (\d+)/.exec(bomb.output);
    expect(capped).not.toBeNull();
    expect(Number(capped?.[1])).toBeLessThan(200);
    const memory = await run(server, py('b=bytearray(1<<30); print("allocated", len(b))'));
    expect(memory.output).not.toMatch(/allocated/);
    expect((await run(server, 'echo still here')).output).toContain('still here');
  }, 90_000);

  test("the server's own files: the audit trail unreadable, the policy file unwritable", async () => {
    const out = await run(
      server,
      `cat ${world.auditPath}; ls ${path.dirname(world.auditPath)}; ${py(`open("${world.policyPath}", "a").write("default: allow")`)}`,
    );
    expect(out.ran).toBe(true);
    expect(out.output).not.toContain('server-start');
    expect(readFileSync(world.policyPath, 'utf8')).not.toMatch(/default: allow\s*$/);
  });

  test('identity and kernel layers: never uid 0, no_new_privs, no new namespace, no keyring', async () => {
    const out = await run(
      server,
      `id -u; grep NoNewPrivs /proc/self/status; unshare -U true && echo UNSHARED; unshare -rn true && echo UNSHARED; ${py('import ctypes; print("keyctl", ctypes.CDLL(None, use_errno=True).syscall(250, 0, -3, 0))')}`,
    );
    const uid = Number(out.output.split('\n')[0]);
    expect(uid).not.toBe(0);
    if (identity === 'unprivileged' && AS_ROOT) expect(uid).toBe(65534);
    expect(out.output).toMatch(/NoNewPrivs:\s+1/);
    expect(out.output).not.toContain('UNSHARED');
    expect(out.output).toContain('keyctl -1');
  });
});

describe('choosing the tier where user namespaces are refused', () => {
  const worlds: SandboxWorld[] = [];
  afterAll(() => {
    for (const w of worlds) w.dispose();
  });
  async function refusal(sandbox: string): Promise<string> {
    const world = makeWorld({ sandbox });
    worlds.push(world);
    const server = serveRefused(world, 'root');
    const exit = await server.untilExit();
    expect(exit.code).toBe(1);
    expect(
      existsSync(world.auditPath)
        ? auditRecords(world).map((r) => (r.event as { action: string }).action)
        : [],
    ).not.toContain('server-start');
    return server.stderr;
  }

  test('tier: namespaces fails closed, naming the namespaces and the fix', async () => {
    const stderr = await refusal(['  mode: required', '  tier: namespaces', '  network: none'].join('\n'));
    expect(stderr).toMatch(/the sandbox cannot start: bubblewrap cannot create a sandbox here/);
    expect(stderr).toMatch(/unprivileged_userns_clone|seccomp=unconfined/);
  });

  test('auto with host sockets allowed by path fails closed: no allowed tier keeps that promise', async () => {
    const stderr = await refusal(
      ['  mode: required', '  network: none', "  unixSockets: { allow: ['/run/termgate-test.sock'] }"].join(
        '\n',
      ),
    );
    expect(stderr).toMatch(
      /no allowed tier can keep this policy's promises: namespaces: .*; landlock: .*unixSockets\.allow/,
    );
    expect(stderr).toMatch(/remove sandbox\.unixSockets\.allow/);
  });

  test('where user namespaces work, auto keeps the namespaces tier', async () => {
    const world = makeWorld({ sandbox: ['  mode: required', '  network: none'].join('\n') });
    worlds.push(world);
    const server = WireServer.start(['--policy', world.policyPath, '--audit', world.auditPath], {
      cwd: world.workspace,
      env: { ...process.env, HOME: world.home },
    });
    const out = await run(server, 'cat /proc/1/cmdline | tr "\\0" " "');
    await server.closeStdin();
    expect(serverStart(world).tier).toMatch(/^namespaces \(bubblewrap\); chosen by auto/);
    expect(out.output).toMatch(/bwrap|bash|cat/);
  });
});

describe('the landlock tier serves the developer workload', () => {
  let world: SandboxWorld;
  let server: WireServer;
  let registry: HttpServer;
  let port = 0;

  beforeAll(async () => {
    registry = createHttpServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(req.url?.startsWith('/-/ping') ? '{}' : '{"answer":"from-the-registry"}');
    });
    await new Promise<void>((resolve) => registry.listen(0, '127.0.0.2', resolve));
    port = (registry.address() as { port: number }).port;
    world = makeWorld({ sandbox: null });
    writeFileSync(
      world.policyPath,
      [
        'default: allow',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a policy placeholder, not a template
        "cwd: { roots: ['${SERVER_CWD}'] }",
        'sandbox:',
        '  mode: required',
        '  filesystem:',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a policy placeholder, not a template
        "    writable: ['${SERVER_CWD}', '~/.npm']",
        "  network: { allow: ['127.0.0.2'] }",
        '',
      ].join('\n'),
    );
    const git = (...args: string[]): void => {
      execFileSync('git', ['-C', world.workspace, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args]);
    };
    writeFileSync(
      path.join(world.workspace, 'Makefile'),
      'all:\n\tmkdir -p out/sub && echo built > out/sub/result.txt\n',
    );
    mkdirSync(path.join(world.workspace, 'out'));
    git('add', 'Makefile', 'source.txt');
    git('commit', '-qm', 'first');
    server = serveRefused(world, 'root');
  });

  afterAll(async () => {
    await server?.dispose();
    registry?.close();
    world?.dispose();
  });

  test('node, python3, git, make, curl and npm through the proxy', async () => {
    const node = await run(server, `node -e 'console.log("node", 6 * 7)'`);
    expect(node.output).toContain('node 42');
    const python = await run(
      server,
      py('import multiprocessing.connection, json; print("python", json.dumps([1]))'),
    );
    expect(python.output).toContain('python [1]');
    const git = await run(server, 'git log --oneline -1 && git status --short && git diff --stat');
    expect(git.exitCode).toBe(0);
    expect(git.output).toContain('first');
    const make = await run(server, 'make');
    expect(make.exitCode).toBe(0);
    expect(readFileSync(path.join(world.workspace, 'out', 'sub', 'result.txt'), 'utf8')).toBe('built\n');
    const curl = await run(server, `curl -sS -m 10 http://127.0.0.2:${port}/x`);
    expect(curl.output).toContain('from-the-registry');
    const npm = await run(server, `npm ping --registry http://127.0.0.2:${port}/`);
    expect(npm.exitCode).toBe(0);
    expect(serverStart(world).tier).toMatch(/^landlock/);
  });
});

describe('the shipped default policy where user namespaces are refused', () => {
  test('auto takes the landlock tier, names it in the trail, and runs a command confined', async () => {
    const world = makeWorld({ sandbox: null });
    const server = WireServer.start(
      ['--policy', path.join(REPO_ROOT, 'policies', 'default.yaml'), '--audit', world.auditPath],
      { cwd: world.workspace, env: { ...process.env, HOME: world.home }, wrap: REFUSE_USERNS },
    );
    try {
      const out = await run(
        server,
        `node -e 'console.log("confined", process.getuid() !== 0)'; cat "$HOME/.bashrc"`,
      );
      expect(out.output).toContain('confined true');
      // HOME is emptied but for what the default policy makes readable.
      expect(out.output).not.toContain('# bashrc');
      expect(serverStart(world).tier).toMatch(/^landlock .*chosen by auto/);
    } finally {
      await server.dispose();
      world.dispose();
    }
  });
});
