import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HostAllowlist } from '../../src/sandbox/host-allowlist.js';
import { HttpAllowlistProxy, type RefusedConnection } from '../../src/sandbox/http-allowlist-proxy.js';
import { MAX_REFUSAL_KEYS, RefusalWindow } from '../../src/sandbox/refusal-window.js';

const basic = (terminal: string, secret: string): string =>
  `Basic ${Buffer.from(`${terminal}:${secret}`).toString('base64')}`;

/**
 * One terminal cannot starve another's proxied requests: silent connections
 * push out only older silent connections, and a terminal's open
 * connections are capped. Real proxy, real sockets.
 */
describe("HttpAllowlistProxy's fair share between terminals", () => {
  let dir: string;
  let origin: Server;
  let port: number;
  let proxy: HttpAllowlistProxy;
  let attacker: string;
  let victim: string;
  const refused: RefusedConnection[] = [];
  const held: Socket[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'termgate-proxy-share-'));
    origin = createServer((_req, res) => res.end('origin'));
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    port = (origin.address() as AddressInfo).port;
    proxy = await HttpAllowlistProxy.listen({
      socketPath: join(dir, 'proxy.sock'),
      allowlist: new HostAllowlist(['127.0.0.1']),
      onRefused: (r) => refused.push(r),
      maxPending: 8,
      perTerminal: 4,
      // Far past the test's timeout: only eviction can end the silent connections in time.
      headersTimeoutMs: 120_000,
    });
    attacker = basic('attacker', proxy.issue('attacker'));
    victim = basic('victim', proxy.issue('victim'));
  });

  // The proxy sees each close a moment after the client: wait for it, so each test starts with the shares free.
  afterEach(async () => {
    for (const socket of held.splice(0)) socket.destroy();
    await new Promise((r) => setTimeout(r, 300));
  });

  afterAll(async () => {
    await proxy.close();
    await new Promise((resolve) => origin.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  function get(credential: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const req = request(
        {
          socketPath: proxy.socketPath,
          path: `http://127.0.0.1:${port}/`,
          headers: { host: 'x', 'proxy-authorization': credential, connection: 'close' },
          agent: false,
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject).end();
    });
  }

  function silent(): Promise<Socket> {
    return new Promise((resolve) => {
      const socket = connect(proxy.socketPath, () => resolve(socket));
      socket.on('error', () => {});
      held.push(socket);
    });
  }

  /** An open tunnel to the origin, as the attacker holds it. */
  function openTunnel(credential: string): Promise<string> {
    return new Promise((resolve) => {
      const socket = connect(proxy.socketPath);
      socket.on('error', () => {});
      held.push(socket);
      socket.setEncoding('utf8').once('data', (text: string) => resolve(text.split('\r\n')[0]!));
      socket.write(
        `CONNECT 127.0.0.1:${port} HTTP/1.1\r\nhost: x\r\nproxy-authorization: ${credential}\r\n\r\n`,
      );
    });
  }

  it('a flood of silent connections ends the oldest of them, and another terminal is still served', async () => {
    const first = await Promise.all(Array.from({ length: 8 }, () => silent()));
    const closed = first.map(
      (socket) => new Promise<void>((resolve) => socket.once('close', () => resolve())),
    );
    // 24 more while the victim asks, interleaved: the victim's head arrives right after its connect.
    const flood = Promise.all(Array.from({ length: 24 }, () => silent()));
    expect(await get(victim)).toBe(200);
    await flood;
    // Every one of the first eight was pushed out by newer ones; nothing waited for a timeout.
    await Promise.all(closed);
    expect(first.every((socket) => socket.destroyed)).toBe(true);
  }, 20_000);

  it("caps one terminal's open connections (429, reported with its id) and leaves the others theirs", async () => {
    refused.length = 0;
    const answers = await Promise.all(Array.from({ length: 4 }, () => openTunnel(attacker)));
    expect(answers).toEqual(Array(4).fill('HTTP/1.1 200 Connection Established'));
    expect(await openTunnel(attacker)).toBe('HTTP/1.1 429 Too Many Requests');
    expect(refused).toEqual([
      { host: '127.0.0.1', port, method: 'CONNECT', terminalId: 'attacker', reason: 'connections', count: 1 },
    ]);
    expect(await get(victim)).toBe(200);
    expect(await openTunnel(victim)).toBe('HTTP/1.1 200 Connection Established');
  }, 20_000);

  it('gives a terminal its share back when its connections close', async () => {
    const answers = await Promise.all(Array.from({ length: 4 }, () => openTunnel(attacker)));
    expect(answers).toEqual(Array(4).fill('HTTP/1.1 200 Connection Established'));
    for (const socket of held.splice(0)) socket.destroy();
    await new Promise((r) => setTimeout(r, 300));
    expect(await openTunnel(attacker)).toBe('HTTP/1.1 200 Connection Established');
  }, 20_000);
});

describe('RefusalWindow per terminal', () => {
  it("one terminal's flood of targets does not push another terminal's first refusal into the overflow bucket", () => {
    const reports: RefusedConnection[] = [];
    const window = new RefusalWindow((r) => reports.push(r), 60_000);
    for (let i = 0; i < MAX_REFUSAL_KEYS + 10; i++) {
      window.add({ host: `h${i}.test`, port: 443, method: 'CONNECT', terminalId: 'a', reason: 'allowlist' });
    }
    window.add({ host: 'b.test', port: 443, method: 'CONNECT', terminalId: 'b', reason: 'allowlist' });
    expect(reports.length).toBe(MAX_REFUSAL_KEYS + 1);
    expect(reports.at(-1)).toEqual({
      host: 'b.test',
      port: 443,
      method: 'CONNECT',
      terminalId: 'b',
      reason: 'allowlist',
      count: 1,
    });
    window.close();
    expect(reports.at(-1)).toEqual({
      host: '*',
      port: 0,
      method: 'CONNECT',
      terminalId: 'a',
      reason: 'allowlist',
      count: 10,
      windowMs: 60_000,
    });
  });
});
