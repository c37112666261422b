/**
 * Hostile HTTP against the built `termgate serve --http` (its defaults:
 * 10 s for the header block, 4 MiB bodies): a slowloris that sends its
 * headers a byte at a time, huge bodies declared and streamed, 1,000 idle
 * connections, a foreign `Origin` and `Host` (DNS rebinding). Each attack
 * is refused without running anything, and a real request is served
 * meanwhile; memory stays bounded (the server's RSS is read from /proc).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { HttpServer, modernHeaders } from '../e2e/support/http-server.js';
import { defaultPolicyArgs, modern, removeAuditFiles } from '../e2e/support/wire-server.js';

function rssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(/(\d+)/.exec(line ?? '')?.[1] ?? Number.NaN) * 1024;
}

/** A TCP connection to the server, resolved once connected; `closed` resolves when the server ends it. */
function open(port: number): Promise<{ socket: Socket; closed: Promise<string> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk.toString();
    });
    const closed = new Promise<string>((done) => socket.on('close', () => done(received)));
    socket.once('connect', () => resolve({ socket, closed }));
    socket.once('error', reject);
  });
}

describe('hostile HTTP against termgate serve --http', () => {
  let server: HttpServer;
  let port: number;
  let scratch: string;

  beforeAll(async () => {
    scratch = mkdtempSync(path.join(tmpdir(), 'termgate-http-hostile-'));
    server = await HttpServer.start(defaultPolicyArgs(false));
    port = Number(new URL(server.url).port);
  });

  afterAll(async () => {
    expect(await server?.stop()).toBe(0);
    rmSync(scratch, { recursive: true, force: true });
    removeAuditFiles();
  });

  /** A one-call create of `command` over 2026-07-28; resolves with the HTTP status and body. */
  const run = async (command: string, headers: Record<string, string> = {}) => {
    const response = await fetch(server.url, {
      method: 'POST',
      headers: { ...modernHeaders('tools/call', 'terminal_create'), ...headers },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: modern({ name: 'terminal_create', arguments: { command, waitSeconds: 5 } }),
      }),
    });
    return { status: response.status, body: await response.text() };
  };

  test('a foreign Origin or Host is refused 403 and runs nothing', async () => {
    const marker = path.join(scratch, 'rebound');
    for (const headers of [
      { origin: 'http://evil.example' },
      { host: `evil.example:${port}` },
      { origin: 'null' },
    ]) {
      const answer = await new Promise<number>((resolve, reject) => {
        const request = `POST /mcp HTTP/1.1\r\nHost: ${headers.host ?? `127.0.0.1:${port}`}\r\n${
          headers.origin ? `Origin: ${headers.origin}\r\n` : ''
        }Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\n`;
        const body = JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: modern({ name: 'terminal_create', arguments: { command: `touch ${marker}` } }),
        });
        const socket = connect(port, '127.0.0.1', () =>
          socket.end(`${request}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`),
        );
        let text = '';
        socket.on('data', (chunk) => {
          text += chunk.toString();
        });
        socket.on('close', () => resolve(Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1])));
        socket.on('error', reject);
      });
      expect([headers, answer]).toEqual([headers, 403]);
    }
    expect(existsSync(marker)).toBe(false);
    expect((await run('echo still-serving')).body).toContain('still-serving');
  });

  test('a slowloris (headers one byte at a time) is cut off by the header timeout; others are served meanwhile', async () => {
    const { socket, closed } = await open(port);
    const header = `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Slow: ${'a'.repeat(10_000)}`;
    let at = 0;
    const drip = setInterval(() => {
      if (!socket.destroyed && at < header.length) socket.write(header[at++] as string);
    }, 200);
    expect((await run('echo served-during-slowloris')).body).toContain('served-during-slowloris');
    const answer = await closed;
    clearInterval(drip);
    // node:http answers 408 before it closes the connection, far before the header block ends.
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(at).toBeLessThan(header.length);
  }, 60_000);

  test('huge bodies: a declared 1 GiB is refused 413 unread, a streamed one is cut at the limit; memory stays bounded', async () => {
    const before = rssBytes(server.child.pid as number);
    const declared = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () =>
        socket.write(
          `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${2 ** 30}\r\n\r\n{"jsonrpc":`,
        ),
      );
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk.toString();
        if (text.includes('\r\n\r\n')) socket.destroy();
      });
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    expect(declared).toMatch(/^HTTP\/1\.1 413/);

    // Chunked, no length: 64 MiB offered in 1 MiB pieces; the server answers 413 once past 4 MiB.
    const streamed = await new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk.toString();
      });
      socket.on('close', () => resolve(text));
      socket.on('error', () => resolve(text));
      socket.once('connect', async () => {
        socket.write(
          `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n`,
        );
        const piece = Buffer.alloc(1024 * 1024, 0x20);
        for (let i = 0; i < 64 && !socket.destroyed && text === ''; i += 1) {
          socket.write(`${piece.length.toString(16)}\r\n`);
          await new Promise<void>((done) => socket.write(piece, () => done()));
          socket.write('\r\n');
        }
        if (!socket.destroyed) socket.end();
      });
    });
    expect(streamed).toMatch(/^HTTP\/1\.1 413/);
    expect(rssBytes(server.child.pid as number) - before).toBeLessThan(64 * 1024 * 1024);
    expect((await run('echo after-huge-bodies')).body).toContain('after-huge-bodies');
  }, 60_000);

  test('1,000 idle connections: a real request is still served, memory stays bounded, and the server closes them', async () => {
    const before = rssBytes(server.child.pid as number);
    const idle: { socket: Socket; closed: Promise<string> }[] = [];
    for (let i = 0; i < 1000; i += 1) idle.push(await open(port));
    expect((await run('echo served-beside-1000-idle')).body).toContain('served-beside-1000-idle');
    expect(rssBytes(server.child.pid as number) - before).toBeLessThan(64 * 1024 * 1024);
    // Nothing was sent on them: the header timeout ends every one.
    await Promise.all(idle.map((connection) => connection.closed));
    expect(idle.every((connection) => connection.socket.destroyed)).toBe(true);
  }, 90_000);
});
