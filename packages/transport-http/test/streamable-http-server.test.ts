/**
 * The Streamable HTTP transport over real sockets (node:http both sides),
 * serving an in-memory endpoint: the principal reaching the connection, the
 * authorizer's refusals, session ownership, the loopback rule, Host and
 * Origin, the extra GET routes, and a client that stops reading an SSE
 * stream.
 */
import { request as httpRequest } from 'node:http';
import type { AuthorizationResult, HttpGetRoute, RequestAuthorizer } from '../src/index.js';
import { StreamableHttpServer } from '../src/index.js';
import { InMemoryEndpoint } from './in-memory-endpoint.js';

const LEGACY = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** Bearer `alice` and `bob` are principals; anything else is 401. */
class TokenNamesAuthorizer implements RequestAuthorizer {
  async authorize(
    headers: Readonly<Record<string, string | string[] | undefined>>,
  ): Promise<AuthorizationResult> {
    const token = /^Bearer (\w+)$/.exec(String(headers.authorization ?? ''))?.[1];
    if (token === 'alice' || token === 'bob') {
      return {
        ok: true,
        principal: {
          id: `https://issuer.test#${token}`,
          subject: token,
          issuer: 'https://issuer.test',
          scopes: [],
        },
      };
    }
    return {
      ok: false,
      status: 401,
      wwwAuthenticate: 'Bearer resource_metadata="x"',
      error: 'invalid_token',
    };
  }
}

async function start(
  endpoint: InMemoryEndpoint,
  options: ConstructorParameters<typeof StreamableHttpServer>[1] = {},
  dependencies: ConstructorParameters<typeof StreamableHttpServer>[2] = {},
) {
  const server = new StreamableHttpServer(endpoint, options, dependencies);
  const { url } = await server.listen();
  return { server, url };
}

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { ...LEGACY, ...headers }, body: JSON.stringify(body) });

describe('StreamableHttpServer', () => {
  const servers: StreamableHttpServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  test('an authorized request is served with the principal’s id as its scope; others get the authorizer’s 401', async () => {
    const endpoint = new InMemoryEndpoint();
    const { server, url } = await start(endpoint, {}, { authorizer: new TokenNamesAuthorizer() });
    servers.push(server);
    const refused = await post(url, { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe('Bearer resource_metadata="x"');
    expect(await refused.json()).toEqual({ error: 'invalid_token' });
    expect(endpoint.contexts).toEqual([]);

    const opened = await post(
      url,
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} },
      { authorization: 'Bearer alice' },
    );
    expect(opened.status).toBe(200);
    const session = opened.headers.get('mcp-session-id') as string;
    expect(endpoint.contexts.map((context) => context.scope)).toEqual(['https://issuer.test#alice']);
    const whoami = await post(
      url,
      { jsonrpc: '2.0', id: 2, method: 'whoami' },
      { authorization: 'Bearer alice', 'mcp-session-id': session },
    );
    expect(await whoami.json()).toEqual({
      jsonrpc: '2.0',
      id: 2,
      result: { scope: 'https://issuer.test#alice' },
    });
  });

  test('a session belongs to the principal that opened it: to another its id is unknown (404)', async () => {
    const endpoint = new InMemoryEndpoint();
    const { server, url } = await start(endpoint, {}, { authorizer: new TokenNamesAuthorizer() });
    servers.push(server);
    const opened = await post(
      url,
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} },
      { authorization: 'Bearer alice' },
    );
    const session = opened.headers.get('mcp-session-id') as string;
    for (const method of ['POST', 'GET', 'DELETE']) {
      const response = await fetch(url, {
        method,
        headers: { ...LEGACY, authorization: 'Bearer bob', 'mcp-session-id': session },
        ...(method === 'POST' && { body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'whoami' }) }),
      });
      expect([method, response.status]).toEqual([method, 404]);
    }
    const still = await post(
      url,
      { jsonrpc: '2.0', id: 3, method: 'whoami' },
      { authorization: 'Bearer alice', 'mcp-session-id': session },
    );
    expect(still.status).toBe(200);
  });

  test('refuses to listen beyond loopback without an authorizer, and listens there with one', async () => {
    const endpoint = new InMemoryEndpoint();
    const bare = new StreamableHttpServer(endpoint, { host: '0.0.0.0' });
    await expect(bare.listen()).rejects.toThrow(/without authorization/);
    const guarded = new StreamableHttpServer(
      endpoint,
      { host: '0.0.0.0' },
      { authorizer: new TokenNamesAuthorizer() },
    );
    servers.push(guarded);
    await expect(guarded.listen()).resolves.toMatchObject({ port: expect.any(Number) });
  });

  test('Host must be allowed and Origin loopback or allowed: DNS rebinding is refused 403 before the endpoint', async () => {
    const endpoint = new InMemoryEndpoint();
    const { server, url } = await start(endpoint, { allowedOrigins: ['https://app.example'] });
    servers.push(server);
    const port = new URL(url).port;
    const raw = (headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
        const req = httpRequest(url, { method: 'POST', headers: { ...LEGACY, ...headers } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end(body);
      });
    expect(await raw({ host: `evil.example:${port}` })).toBe(403);
    expect(await raw({ host: `127.0.0.1:${port}`, origin: 'http://evil.example' })).toBe(403);
    expect(await raw({ host: `127.0.0.1:${port}`, origin: 'null' })).toBe(403);
    expect(endpoint.contexts).toEqual([]);
    expect(await raw({ host: `localhost:${port}`, origin: `http://localhost:${port}` })).toBe(200);
    expect(await raw({ host: `127.0.0.1:${port}`, origin: 'https://app.example' })).toBe(200);
  });

  test('extra GET routes are served without authorization; the MCP path stays the endpoint’s', async () => {
    const endpoint = new InMemoryEndpoint();
    const routes: HttpGetRoute[] = [
      {
        path: '/.well-known/oauth-protected-resource',
        prefix: true,
        respond: ({ path }) => ({ status: 200, body: JSON.stringify({ path }) }),
      },
      { path: '/mcp', respond: () => ({ status: 200, body: '"hijacked"' }) },
    ];
    const { server, url } = await start(endpoint, {}, { authorizer: new TokenNamesAuthorizer(), routes });
    servers.push(server);
    const base = new URL(url).origin;
    const metadata = await fetch(`${base}/.well-known/oauth-protected-resource/mcp`);
    expect(await metadata.json()).toEqual({ path: '/.well-known/oauth-protected-resource/mcp' });
    expect((await fetch(url, { headers: { accept: 'text/event-stream' } })).status).toBe(401);
    expect((await fetch(`${base}/elsewhere`)).status).toBe(404);
  });

  test('a huge declared body is refused 413 unread; a batch is 400; a bad Accept 406', async () => {
    const endpoint = new InMemoryEndpoint();
    const { server, url } = await start(endpoint, { maxBodyBytes: 1024 });
    servers.push(server);
    const big = await post(url, { jsonrpc: '2.0', id: 1, method: 'echo', params: { pad: 'x'.repeat(4096) } });
    expect(big.status).toBe(413);
    expect((await post(url, [{ jsonrpc: '2.0', id: 1, method: 'echo' }])).status).toBe(400);
    const accept = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/html' },
      body: '{}',
    });
    expect(accept.status).toBe(406);
    expect(endpoint.contexts).toEqual([]);
  });

  test('a client that stops reading an SSE stream: the server’s writes wait, then the stream is destroyed and the request cancelled', async () => {
    const endpoint = new InMemoryEndpoint();
    const { server, url } = await start(endpoint, { stallTimeoutMs: 500 });
    servers.push(server);
    const opened = await post(url, { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
    const session = opened.headers.get('mcp-session-id') as string;
    // A raw request whose response is never read: the socket's buffers fill, then the writes wait.
    const req = httpRequest(
      url,
      { method: 'POST', headers: { ...LEGACY, 'mcp-session-id': session } },
      (res) => {
        res.pause();
      },
    );
    req.on('error', () => undefined);
    req.end(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 'flood-1',
        method: 'flood',
        params: { _meta: { progressToken: 't' } },
      }),
    );
    while (endpoint.cancelled.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    req.destroy();
    expect(endpoint.cancelled).toEqual(['flood-1']);
    // 64 KiB a message: what the kernel's socket buffers and one stream's queue held, not the 10,000 asked for.
    expect(endpoint.floodSent).toBeGreaterThan(0);
    expect(endpoint.floodSent).toBeLessThan(1000);
    // The session still serves.
    const again = await post(url, { jsonrpc: '2.0', id: 2, method: 'whoami' }, { 'mcp-session-id': session });
    expect(again.status).toBe(200);
  });

  test('a stateless request is its own connection; its header claims are checked against the body', async () => {
    const endpoint = new InMemoryEndpoint();
    const { server, url } = await start(endpoint);
    servers.push(server);
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    const modern = (method: string, headers: Record<string, string>) =>
      post(
        url,
        { jsonrpc: '2.0', id: 7, method, params: { name: 'x', _meta: meta } },
        { 'mcp-protocol-version': '2026-07-28', ...headers },
      );
    expect((await modern('tools/call', { 'mcp-method': 'tools/call', 'mcp-name': 'x' })).status).toBe(200);
    expect((await modern('tools/call', { 'mcp-method': 'tools/call', 'mcp-name': 'x' })).status).toBe(200);
    expect(endpoint.contexts).toHaveLength(2);
    const mismatch = await modern('tools/call', { 'mcp-method': 'tools/list', 'mcp-name': 'x' });
    expect(mismatch.status).toBe(400);
    expect(await mismatch.json()).toMatchObject({ id: 7, error: { code: -32020 } });
    expect((await modern('tools/call', { 'mcp-method': 'tools/call' })).status).toBe(400);
    const noClaim = await post(
      url,
      { jsonrpc: '2.0', id: 8, method: 'tools/list' },
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' },
    );
    expect(await noClaim.json()).toMatchObject({ error: { code: -32602 } });
    expect(endpoint.contexts).toHaveLength(2);
  });
});
