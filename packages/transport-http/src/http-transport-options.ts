import { isIP } from 'node:net';

/** TLS material for `node:https`, PEM. */
export interface TlsMaterial {
  readonly key: string | Buffer;
  readonly cert: string | Buffer;
}

/**
 * How the Streamable HTTP transport listens and what it accepts. Every
 * limit has a default; {@link resolveHttpOptions} fills them and refuses
 * a configuration that cannot be safe.
 */
export interface HttpTransportOptions {
  /** Interface to bind. Default `127.0.0.1`. */
  readonly host?: string;
  /** TCP port; `0` picks a free one. Default `0`. */
  readonly port?: number;
  /** The MCP endpoint's path. Default `/mcp`. */
  readonly path?: string;
  /**
   * Host names a request's `Host` header may name (DNS-rebinding
   * protection; the port is not compared). Default: `localhost`,
   * `127.0.0.1`, `[::1]`, and the bound host when it is not a wildcard.
   */
  readonly allowedHosts?: readonly string[];
  /**
   * Origins (`scheme://host[:port]`) a request may carry in `Origin`, besides
   * the loopback ones (`http(s)://localhost`, `127.0.0.1`, `[::1]`, any port),
   * which are always accepted. A request without `Origin` (not from a
   * browser) passes; any other origin is refused 403.
   */
  readonly allowedOrigins?: readonly string[];
  /** Serve HTTPS with this key and certificate; absent: plain HTTP (loopback, or behind a TLS-terminating proxy). */
  readonly tls?: TlsMaterial;
  /** Largest request body, in bytes; beyond it 413. Default 4 MiB (stdio's line limit). */
  readonly maxBodyBytes?: number;
  /** node:http `headersTimeout`: the whole header block must arrive within it. Default 10 s. */
  readonly headersTimeoutMs?: number;
  /** node:http `requestTimeout`: the whole request (headers and body) must arrive within it. Default 30 s. */
  readonly requestTimeoutMs?: number;
  /** node:http `keepAliveTimeout`: an idle kept-alive connection is closed after it. Default 5 s. */
  readonly keepAliveTimeoutMs?: number;
  /** node:http `maxHeaderSize`, in bytes; beyond it 431. Default 16 KiB. */
  readonly maxHeaderBytes?: number;
  /** Open TCP connections at most; more are dropped at accept. Default 4096. */
  readonly maxConnections?: number;
  /**
   * How long a response stream may keep output the client does not read
   * before it is destroyed (its request counts as cancelled). Default 30 s,
   * as on stdio.
   */
  readonly stallTimeoutMs?: number;
  /** Legacy (2025-11-25) sessions open at once; an `initialize` beyond is refused 503. Default 256. */
  readonly maxSessions?: number;
  /** A legacy session with no request for this long is closed. Default 30 minutes. */
  readonly sessionIdleMs?: number;
  /** Protocol versions of the stateless era (an `MCP-Protocol-Version` header naming one requires its `_meta`). Default `2026-07-28`. */
  readonly modernVersions?: readonly string[];
}

/** A browser page served from this machine: `http(s)://localhost|127.0.0.1|[::1][:port]`. */
export function isLoopbackOrigin(origin: string): boolean {
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && isLoopback(url.hostname);
  } catch {
    return false;
  }
}

export type ResolvedHttpOptions = Required<Omit<HttpTransportOptions, 'tls'>> & {
  readonly tls?: TlsMaterial;
};

const WILDCARDS = new Set(['0.0.0.0', '::', '']);

/** The `Host` names accepted by default: the loopback names, and the bound host unless it is a wildcard. */
export function defaultAllowedHosts(host: string): string[] {
  const bound = WILDCARDS.has(host) ? [] : [isIP(host) === 6 ? `[${host}]` : host];
  return [...new Set(['localhost', '127.0.0.1', '[::1]', ...bound])];
}

/** True for an address or name that only this machine can reach. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  if (bare === 'localhost') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  if (isIP(bare) === 6) return bare === '::1';
  return false;
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`http transport: ${name} must be a positive number, got ${value}`);
  return value;
}

/** The options with their defaults; throws on a value that makes no sense. */
export function resolveHttpOptions(options: HttpTransportOptions): ResolvedHttpOptions {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`http transport: port ${port} is not a TCP port`);
  const path = options.path ?? '/mcp';
  if (!path.startsWith('/')) throw new Error(`http transport: path "${path}" must start with /`);
  const allowedHosts = (options.allowedHosts ?? defaultAllowedHosts(host)).map((name) => name.toLowerCase());
  const allowedOrigins = (options.allowedOrigins ?? []).map((origin) => {
    try {
      return new URL(origin).origin;
    } catch {
      throw new Error(`http transport: allowed origin "${origin}" is not an origin (scheme://host[:port])`);
    }
  });
  return {
    host,
    port,
    path,
    allowedHosts,
    allowedOrigins,
    ...(options.tls && { tls: options.tls }),
    maxBodyBytes: positive('maxBodyBytes', options.maxBodyBytes ?? 4 * 1024 * 1024),
    headersTimeoutMs: positive('headersTimeoutMs', options.headersTimeoutMs ?? 10_000),
    requestTimeoutMs: positive('requestTimeoutMs', options.requestTimeoutMs ?? 30_000),
    keepAliveTimeoutMs: positive('keepAliveTimeoutMs', options.keepAliveTimeoutMs ?? 5_000),
    maxHeaderBytes: positive('maxHeaderBytes', options.maxHeaderBytes ?? 16 * 1024),
    maxConnections: positive('maxConnections', options.maxConnections ?? 4096),
    stallTimeoutMs: positive('stallTimeoutMs', options.stallTimeoutMs ?? 30_000),
    maxSessions: positive('maxSessions', options.maxSessions ?? 256),
    sessionIdleMs: positive('sessionIdleMs', options.sessionIdleMs ?? 30 * 60_000),
    modernVersions: options.modernVersions ?? ['2026-07-28'],
  };
}
