import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HostAllowlist } from '../../src/sandbox/host-allowlist.js';
import {
  HttpAllowlistProxy,
  type ProxiedConnection,
  type RefusedConnection,
} from '../../src/sandbox/http-allowlist-proxy.js';

/** `Proxy-Authorization` as a client sends it for `http://<terminal>:<secret>@…`. */
function basic(terminal: string, secret: string): string {
  return `Basic ${Buffer.from(`${terminal}:${secret}`).toString('base64')}`;
}

/** A real proxy on a real Unix socket in front of a real HTTP server on loopback. */
describe('HttpAllowlistProxy', () => {
  let dir: string;
  let origin: Server;
  let port: number;
  let proxy: HttpAllowlistProxy;
  const refused: RefusedConnection[] = [];
  const allowed: ProxiedConnection[] = [];
  let auth: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'termgate-proxy-'));
    origin = createServer((req, res) =>
      res.end(`origin saw ${req.method} ${req.url} host=${req.headers.host}`),
    );
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    port = (origin.address() as AddressInfo).port;
    proxy = await HttpAllowlistProxy.listen({
      socketPath: join(dir, 'proxy.sock'),
      allowlist: new HostAllowlist(['127.0.0.1', '*.allowed.test']),
      onRefused: (r) => refused.push(r),
      onAllowed: (a) => allowed.push(a),
    });
    auth = basic('t1', proxy.issue('t1'));
  });

  afterAll(async () => {
    await proxy.close();
    await new Promise((resolve) => origin.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  function viaProxy(
    path: string,
    credential: string | null = auth,
  ): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const host = /^http:\/\/([^/]+)/.exec(path)?.[1] ?? 'x';
      const headers: Record<string, string> = { host };
      if (credential !== null) headers['proxy-authorization'] = credential;
      const req = request({ socketPath: proxy.socketPath, path, method: 'GET', headers }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (c: string) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject).end();
    });
  }

  function tunnel(authority: string, credential: string | null = auth): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect(proxy.socketPath);
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        text += chunk;
        if (text.startsWith('HTTP/1.1 200') && text.includes('\r\n\r\n') && !text.includes('origin saw')) {
          socket.write(`GET /tunnelled HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`);
        }
      });
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
      const proof = credential === null ? '' : `proxy-authorization: ${credential}\r\n`;
      socket.write(`CONNECT ${authority} HTTP/1.1\r\nhost: ${authority}\r\n${proof}\r\n`);
    });
  }

  it('forwards an absolute-form request to an allowed host, and reports it with the terminal', async () => {
    allowed.length = 0;
    const answer = await viaProxy(`http://127.0.0.1:${port}/a?b=1`);
    expect(answer).toEqual({ status: 200, body: `origin saw GET /a?b=1 host=127.0.0.1:${port}` });
    expect(allowed).toEqual([{ host: '127.0.0.1', port, method: 'GET', terminalId: 't1', count: 1 }]);
  });

  it('refuses a request without a credential, or with a forged, unknown or revoked one: 407, reported, never proxied', async () => {
    const before = refused.length;
    const allowedBefore = allowed.length;
    const t2 = proxy.issue('t2');
    const target = `http://127.0.0.1:${port}/`;
    const cases = [null, basic('t1', 'not-the-secret'), basic('t9', t2), basic('t2', `${t2}x`), 'Bearer abc'];
    for (const credential of cases) {
      const answer = await viaProxy(target, credential);
      expect(answer.status).toBe(407);
      expect(answer.body).not.toContain('origin saw');
      expect(await tunnel(`127.0.0.1:${port}`, credential)).toMatch(
        /^HTTP\/1\.1 407 Proxy Authentication Required/,
      );
    }
    const beforeRevoked = refused.length;
    proxy.revoke('t2');
    expect((await viaProxy(target, basic('t2', t2))).status).toBe(407);
    expect(allowed.length).toBe(allowedBefore);
    // A revoked credential is refused too, and the report names the terminal it was issued to.
    expect(refused.slice(beforeRevoked)).toEqual([
      { host: '127.0.0.1', port, method: 'GET', terminalId: 't2', reason: 'credential', count: 1 },
    ]);
    const reports = refused.slice(before, beforeRevoked);
    expect(reports.length).toBeGreaterThanOrEqual(2);
    expect(reports.every((r) => r.terminalId === null && r.reason === 'credential')).toBe(true);
    expect(reports[0]).toEqual({
      host: '127.0.0.1',
      port,
      method: 'GET',
      terminalId: null,
      reason: 'credential',
      count: 1,
    });
  });

  it('refuses a host outside the list with 403, and reports it', async () => {
    const before = refused.length;
    const answer = await viaProxy(`http://localhost:${port}/`);
    expect(answer.status).toBe(403);
    expect(answer.body).toMatch(/localhost is not in the policy's network allowlist/);
    expect(refused.slice(before)).toEqual([
      { host: 'localhost', port, method: 'GET', terminalId: 't1', reason: 'allowlist', count: 1 },
    ]);
  });

  it('tunnels CONNECT to an allowed host and refuses it to another', async () => {
    expect(await tunnel(`127.0.0.1:${port}`)).toMatch(
      /^HTTP\/1\.1 200 Connection Established[\s\S]*origin saw GET \/tunnelled/,
    );
    const before = refused.length;
    expect(await tunnel(`localhost:${port}`)).toMatch(/^HTTP\/1\.1 403 Forbidden/);
    expect(refused.slice(before)).toEqual([
      { host: 'localhost', port, method: 'CONNECT', terminalId: 't1', reason: 'allowlist', count: 1 },
    ]);
  });

  it('refuses an IPv6 zone id dressed as an allowed name, which net.connect would take for loopback', async () => {
    const before = refused.length;
    expect(await tunnel(`[::ffff:127.0.0.1%.allowed.test]:${port}`)).toMatch(/^HTTP\/1\.1 403 Forbidden/);
    expect(refused.slice(before)).toEqual([
      {
        host: '::ffff:127.0.0.1%.allowed.test',
        port,
        method: 'CONNECT',
        terminalId: 't1',
        reason: 'allowlist',
        count: 1,
      },
    ]);
  });

  it('answers 400 to an origin-form request and a malformed CONNECT', async () => {
    expect((await viaProxy('/not-absolute')).status).toBe(400);
    expect(await tunnel('no-port')).toMatch(/^HTTP\/1\.1 400/);
  });
});

/** What a hostile client does to the proxy: it must neither crash, nor keep half-sent heads, nor flood the trail. */
describe('HttpAllowlistProxy under attack', () => {
  let dir: string;
  let origin: Server;
  let port: number;
  let proxy: HttpAllowlistProxy;
  const refused: RefusedConnection[] = [];
  let auth: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'termgate-proxy-attack-'));
    origin = createServer((_req, res) => res.end('origin'));
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    port = (origin.address() as AddressInfo).port;
    proxy = await HttpAllowlistProxy.listen({
      socketPath: join(dir, 'proxy.sock'),
      allowlist: new HostAllowlist(['127.0.0.1']),
      onRefused: (r) => refused.push(r),
      headersTimeoutMs: 300,
      refusalWindowMs: 400,
    });
    auth = basic('victim', proxy.issue('victim'));
  });

  afterAll(async () => {
    await proxy.close();
    await new Promise((resolve) => origin.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  function allowedGet(): Promise<number> {
    return new Promise((resolve, reject) => {
      const req = request(
        {
          socketPath: proxy.socketPath,
          path: `http://127.0.0.1:${port}/`,
          headers: { host: 'x', 'proxy-authorization': auth },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject).end();
    });
  }

  it('survives refused CONNECTs whose client left before the answer (EPIPE on the refusal)', async () => {
    const uncaught: Error[] = [];
    const onUncaught = (error: Error): void => {
      uncaught.push(error);
    };
    process.on('uncaughtException', onUncaught);
    try {
      for (let round = 0; round < 20; round++) {
        await Promise.all(
          Array.from(
            { length: 20 },
            () =>
              new Promise<void>((resolve) => {
                const socket = connect(proxy.socketPath);
                socket.on('error', () => {});
                socket.on('close', () => resolve());
                // Gone before the proxy writes its 403: EPIPE on the proxy's write.
                socket.write('CONNECT 127.0.0.2:1 HTTP/1.1\r\nhost: 127.0.0.2:1\r\n\r\n', () =>
                  socket.destroy(),
                );
              }),
          ),
        );
      }
      await new Promise((r) => setTimeout(r, 200));
    } finally {
      process.off('uncaughtException', onUncaught);
    }
    expect(uncaught).toEqual([]);
    expect(await allowedGet()).toBe(200);
  });

  it('closes a connection whose request head does not arrive whole within the headers timeout', async () => {
    const socket = connect(proxy.socketPath);
    socket.on('error', () => {});
    socket.write(`GET http://127.0.0.1:${port}/ HTTP/1.1\r\nhost: x\r\n`);
    const started = Date.now();
    await new Promise<void>((resolve) => socket.on('close', () => resolve()));
    // Node's default would keep it 60 s; the bound is generous for a loaded machine.
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(await allowedGet()).toBe(200);
  }, 30_000);

  it('folds a flood of one refusal into the first report at once and one counted report per window', async () => {
    refused.length = 0;
    const refuseOnce = (): Promise<void> =>
      new Promise((resolve) => {
        const req = request(
          {
            socketPath: proxy.socketPath,
            path: 'http://flood.test/',
            headers: { host: 'flood.test', 'proxy-authorization': auth },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve());
          },
        );
        req.on('error', () => resolve()).end();
      });
    // Earlier tests' refusals may still be reported when their window ends: count this host's only.
    const flood = (): typeof refused => refused.filter((r) => r.host === 'flood.test');
    await refuseOnce();
    expect(flood()).toEqual([
      { host: 'flood.test', port: 80, method: 'GET', terminalId: 'victim', reason: 'allowlist', count: 1 },
    ]);
    for (let i = 0; i < 49; i++) await refuseOnce();
    await new Promise((r) => setTimeout(r, 1500));
    const total = flood().reduce((sum, r) => sum + (r.count ?? 0), 0);
    expect(total).toBe(50);
    // However the 50 fell across windows: at most two reports per window, never one per refusal.
    expect(flood().length).toBeLessThan(10);
    expect(
      flood()
        .slice(1)
        .every((r) => r.windowMs === 400 && (r.count ?? 0) >= 1),
    ).toBe(true);
  }, 30_000);
});
