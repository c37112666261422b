import { unlink } from 'node:fs/promises';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { ConnectionShare } from './connection-share.js';
import type { HostAllowlist } from './host-allowlist.js';
import { type ProxyCaller, ProxyCredentials } from './proxy-credentials.js';
import { type ProxiedConnection, RefusalWindow, type RefusedConnection } from './refusal-window.js';

export type { ProxiedConnection, RefusalReason, RefusedConnection } from './refusal-window.js';

/** How long a client has to send a whole request head. */
export const HEADERS_TIMEOUT_MS = 5_000;
/** Repeats of one refusal within this window are folded into one counted report. */
export const REFUSAL_WINDOW_MS = 10_000;

export interface HttpAllowlistProxyOptions {
  /** Unix socket to listen on; created with mode 0600 semantics of its directory. */
  readonly socketPath: string;
  readonly allowlist: HostAllowlist;
  /**
   * Called for the first refusal of a target in a window, before it is
   * answered, and once per window for its repeats (`count`). Must not throw.
   */
  readonly onRefused: (refused: RefusedConnection) => void;
  /**
   * Called for the first allowed connection of a terminal to a target in a
   * window, and once per window for its repeats (`count`). Must not throw.
   */
  readonly onAllowed?: (allowed: ProxiedConnection) => void;
  /** Default `MAX_PENDING_CONNECTIONS` and `MAX_CONNECTIONS_PER_TERMINAL` (tests). */
  readonly maxPending?: number;
  readonly perTerminal?: number;
  /** Default `HEADERS_TIMEOUT_MS` (tests). */
  readonly headersTimeoutMs?: number;
  /** Default `REFUSAL_WINDOW_MS` (tests). */
  readonly refusalWindowMs?: number;
}

const HOP_BY_HOP = [
  'connection',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'keep-alive',
  'te',
  'trailer',
  'upgrade',
];

/**
 * The filtering HTTP proxy of a sandbox whose network is an allowlist. It
 * runs in termgate's process, outside every sandbox, and listens on a Unix
 * socket that a relay inside the sandboxes' network namespace forwards
 * loopback connections to: inside, that relay is the only way out.
 *
 * Contract:
 * - Every request must carry the credential of a terminal (`issue`) in
 *   `Proxy-Authorization`; one without, or with one that names no live
 *   terminal, is answered 407 and reported as refused (`reason`
 *   `credential`; no terminal, but for a revoked credential, which names
 *   the ended terminal it was issued to): it is never proxied.
 * - Fair share (`ConnectionShare`): at most `MAX_PENDING_CONNECTIONS`
 *   connections without a head (the oldest goes first), at most
 *   `MAX_CONNECTIONS_PER_TERMINAL` open per terminal (beyond: 429, reported
 *   as refused with `reason` `connections`).
 * - Every report (refused and allowed) names the terminal its credential named.
 * - `CONNECT host:port` (HTTPS, and any TLS client honouring
 *   `HTTPS_PROXY`) opens a tunnel when `host` is allowed, else answers 403.
 * - An absolute-form request (`GET http://host/…`) is forwarded when `host`
 *   is allowed, else answered 403. Anything else is 400.
 * - The check is on the name the client asked for; the proxy resolves it
 *   with the host's resolver. Ports are not restricted.
 * - Refusals are reported to `onRefused` through a `RefusalWindow`: the
 *   first of each target at once, before it is answered; its repeats as one
 *   counted report per window, so a flood cannot grow the trail unbounded.
 * - A request head must arrive whole within `HEADERS_TIMEOUT_MS`, else the
 *   connection is closed: half-sent heads cannot pile up.
 * - No socket of the proxy's, client or upstream, can raise an unhandled
 *   `'error'` (a peer gone before the refusal is written is EPIPE): each
 *   one's error destroys it, and its partner.
 *
 * Built on `node:http` and `node:net`: a forward proxy's whole job is the
 * `connect` event and a piped request, which those modules provide.
 */
export class HttpAllowlistProxy {
  readonly #server: Server;
  readonly #sockets = new Set<Duplex>();
  readonly #refusals: RefusalWindow;
  readonly #allowed: RefusalWindow<ProxiedConnection>;
  readonly #credentials = new ProxyCredentials();

  private constructor(
    server: Server,
    readonly socketPath: string,
    refusals: RefusalWindow,
    allowed: RefusalWindow<ProxiedConnection>,
  ) {
    this.#server = server;
    this.#refusals = refusals;
    this.#allowed = allowed;
  }

  /**
   * A fresh secret for `terminalId` (a terminal's id, without ":"): its
   * commands' proxy URL is `http://<terminalId>:<secret>@…`. Until
   * `revoke`, requests carrying it are that terminal's.
   */
  issue(terminalId: string): string {
    return this.#credentials.issue(terminalId);
  }

  /** The terminal ended: its secret is refused from now on. */
  revoke(terminalId: string): void {
    this.#credentials.revoke(terminalId);
  }

  static async listen(options: HttpAllowlistProxyOptions): Promise<HttpAllowlistProxy> {
    const headersTimeout = options.headersTimeoutMs ?? HEADERS_TIMEOUT_MS;
    const server = createServer({
      headersTimeout,
      // Node checks the timeouts on this interval (30 s by default); a fifth of the limit keeps it near.
      connectionsCheckingInterval: Math.max(100, Math.floor(headersTimeout / 5)),
    });
    const windowMs = options.refusalWindowMs ?? REFUSAL_WINDOW_MS;
    const refusals = new RefusalWindow(options.onRefused, windowMs);
    const allowed = new RefusalWindow<ProxiedConnection>(options.onAllowed ?? (() => {}), windowMs);
    const proxy = new HttpAllowlistProxy(server, options.socketPath, refusals, allowed);
    const share = new ConnectionShare(options.maxPending, options.perTerminal);
    /**
     * The refusal of one head, or null when it may go on: no valid
     * credential (407), the terminal's share used up (429), a host outside
     * the list (403). Each refusal is reported before it is answered.
     */
    const judge = (
      req: IncomingMessage,
      target: Target,
      method: string,
    ): { status: number; text: string; caller: ProxyCaller } | null => {
      const socket = req.socket;
      const caller = proxy.#credentials.identify(headerOf(req, 'proxy-authorization'));
      // A credential of a terminal that has ended is refused, and names that terminal.
      const named =
        caller.terminalId ?? ('endedTerminalId' in caller ? (caller.endedTerminalId ?? null) : null);
      const base = { host: target.hostname, port: target.port, method, terminalId: named };
      if (caller.terminalId === null) {
        share.settle(socket);
        refusals.add({ ...base, reason: 'credential' });
        return { status: 407, text: credentialText(caller.problem), caller };
      }
      if (!share.claim(socket, caller.terminalId)) {
        refusals.add({ ...base, reason: 'connections' });
        return { status: 429, text: shareText(), caller };
      }
      if (!options.allowlist.allows(target.hostname)) {
        refusals.add({ ...base, reason: 'allowlist' });
        return { status: 403, text: refusalText(target.hostname), caller };
      }
      allowed.add(base);
      return null;
    };
    server.on('connection', (socket: Socket) => {
      proxy.#track(socket);
      share.arrived(socket);
    });
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const target = parseAbsoluteUrl(req.url);
      if (target === null) {
        share.settle(req.socket);
        res.writeHead(400, { 'content-type': 'text/plain', connection: 'close' });
        res.end('termgate proxy: absolute URL expected\n');
        return;
      }
      const refusal = judge(req, target, req.method ?? 'GET');
      if (refusal !== null) {
        res.writeHead(refusal.status, { ...refusalHeaders(refusal.status), connection: 'close' });
        res.end(refusal.text);
        return;
      }
      forward(req, res, target);
    });
    server.on('connect', (req: IncomingMessage, client: Duplex, head: Buffer) => {
      proxy.#track(client);
      const target = parseAuthority(req.url);
      if (target === null) {
        share.settle(req.socket);
        client.end('HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n');
        return;
      }
      const refusal = judge(req, target, 'CONNECT');
      if (refusal !== null) {
        const headers = Object.entries(refusalHeaders(refusal.status))
          .map(([name, value]) => `${name}: ${value}\r\n`)
          .join('');
        client.end(
          `HTTP/1.1 ${refusal.status} ${STATUS_TEXT[refusal.status]}\r\n${headers}content-length: ${Buffer.byteLength(refusal.text)}\r\n\r\n${refusal.text}`,
        );
        return;
      }
      const upstream = connect(target.port, target.hostname);
      proxy.#track(upstream);
      let connected = false;
      upstream.once('connect', () => {
        connected = true;
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length > 0) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on('error', () => {
        if (connected) client.destroy();
        else client.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n');
      });
      client.on('close', () => upstream.destroy());
    });
    server.on('clientError', (_error, socket) => socket.destroy());
    await unlink(options.socketPath).catch(() => {});
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.socketPath, () => {
        server.off('error', reject);
        resolve();
      });
    });
    return proxy;
  }

  /** Calls `listener` when the listening socket fails after `listen` resolved (never an unhandled 'error'). */
  onError(listener: (error: Error) => void): void {
    this.#server.on('error', listener);
  }

  /** Stops listening and drops every open connection. */
  async close(): Promise<void> {
    this.#refusals.close();
    this.#allowed.close();
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    await unlink(this.socketPath).catch(() => {});
  }

  /** Every socket is tracked as soon as the proxy owns it, and from then on its errors end it. */
  #track(socket: Duplex): void {
    if (this.#sockets.has(socket)) return;
    this.#sockets.add(socket);
    socket.on('error', () => socket.destroy());
    socket.once('close', () => this.#sockets.delete(socket));
  }
}

interface Target {
  readonly hostname: string;
  readonly port: number;
}

const STATUS_TEXT: Readonly<Record<number, string>> = {
  403: 'Forbidden',
  407: 'Proxy Authentication Required',
  429: 'Too Many Requests',
};

function refusalHeaders(status: number): Record<string, string> {
  return status === 407
    ? { 'content-type': 'text/plain', 'proxy-authenticate': 'Basic realm="termgate"' }
    : { 'content-type': 'text/plain' };
}

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function credentialText(problem: 'missing' | 'unknown' | 'forged' | 'ended'): string {
  const what =
    problem === 'missing'
      ? 'the request carries no proxy credential'
      : problem === 'unknown'
        ? 'the proxy credential names no running terminal'
        : problem === 'ended'
          ? "the proxy credential's terminal has ended"
          : 'the proxy credential is wrong';
  return `termgate sandbox: ${what}; use the proxy URL of this terminal's environment (HTTPS_PROXY, HTTP_PROXY) as it is\n`;
}

function shareText(): string {
  return 'termgate sandbox: this terminal has too many connections open through the network proxy; close some and retry\n';
}

function refusalText(host: string): string {
  return `termgate sandbox: ${host} is not in the policy's network allowlist (sandbox.network.allow)\n`;
}

function parseAbsoluteUrl(url: string | undefined): (Target & { readonly url: URL }) | null {
  if (url === undefined || !/^http:\/\//i.test(url)) return null;
  try {
    const parsed = new URL(url);
    const hostname = parsed.hostname.replace(/^\[|\]$/g, '');
    return { hostname, port: Number(parsed.port || 80), url: parsed };
  } catch {
    return null;
  }
}

function parseAuthority(authority: string | undefined): Target | null {
  if (authority === undefined) return null;
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(authority);
  if (m === null) return null;
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return null;
  return { hostname: (m[1] ?? m[2])!, port };
}

function forward(req: IncomingMessage, res: ServerResponse, target: Target & { readonly url: URL }): void {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined && !HOP_BY_HOP.includes(name)) headers[name] = value;
  }
  const upstream = httpRequest(
    {
      host: target.hostname,
      port: target.port,
      method: req.method,
      path: `${target.url.pathname}${target.url.search}`,
      headers,
    },
    (answer) => {
      const back: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(answer.headers)) {
        if (value !== undefined && !HOP_BY_HOP.includes(name)) back[name] = value;
      }
      res.writeHead(answer.statusCode ?? 502, back);
      // An upstream that resets mid-body ends the client's response, never the server.
      answer.on('error', () => res.destroy());
      answer.pipe(res);
    },
  );
  upstream.on('error', () => {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
    res.end();
  });
  req.on('error', () => upstream.destroy());
  res.on('close', () => upstream.destroy());
  req.pipe(upstream);
}
