import { isAbsolute, resolve } from 'node:path';
import type { HttpServeConfig } from '../serve/serve-config.js';
import { UsageError } from './usage.js';

export const HTTP_OPTIONS_USAGE = `  --http HOST:PORT   serve MCP over Streamable HTTP at http://HOST:PORT/mcp instead of stdio
                     (PORT 0 picks a free one; the URL is printed on stderr). Without
                     authorization only a loopback HOST (127.0.0.1, [::1], localhost) is allowed
  --tls-key FILE, --tls-cert FILE
                     serve HTTPS with this PEM key and certificate (both or neither)
  --allowed-origin ORIGIN
                     accept browser requests from ORIGIN (scheme://host[:port]); repeatable;
                     default: none (a request with an Origin header is refused 403)
  --allowed-host NAME
                     accept this Host header name too (e.g. the name a reverse proxy forwards);
                     repeatable; the loopback names and the bound host are always accepted
`;

/** The options `parseArgs` reads for HTTP. */
export const HTTP_PARSE_OPTIONS = {
  http: { type: 'string' },
  'tls-key': { type: 'string' },
  'tls-cert': { type: 'string' },
  'allowed-origin': { type: 'string', multiple: true },
  'allowed-host': { type: 'string', multiple: true },
} as const;

type Values = Readonly<Record<string, string | boolean | readonly (string | boolean)[] | undefined>>;

/** `[::1]:8080`, `127.0.0.1:0`, `localhost:3000` → host and port. Throws `UsageError`. */
export function parseListen(value: string): { host: string; port: number } {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(value);
  const port = Number(match?.[3]);
  if (match === null || port > 65535) {
    throw new UsageError(`--http must be HOST:PORT (e.g. 127.0.0.1:8080, [::1]:8080), got "${value}"`);
  }
  return { host: (match[1] ?? match[2]) as string, port };
}

/** The HTTP part of `serve`'s config, or undefined without `--http`. Throws `UsageError`. */
export function httpServeConfig(values: Values, cwd: string): HttpServeConfig | undefined {
  const text = (name: string) => (typeof values[name] === 'string' ? (values[name] as string) : undefined);
  const list = (name: string) => (Array.isArray(values[name]) ? (values[name] as string[]) : []);
  const listen = text('http');
  const key = text('tls-key');
  const cert = text('tls-cert');
  if (listen === undefined) {
    for (const name of ['tls-key', 'tls-cert', 'allowed-origin', 'allowed-host']) {
      if (values[name] !== undefined) throw new UsageError(`--${name} needs --http HOST:PORT`);
    }
    return undefined;
  }
  if ((key === undefined) !== (cert === undefined))
    throw new UsageError('--tls-key and --tls-cert go together');
  const absolute = (path: string) => (isAbsolute(path) ? path : resolve(cwd, path));
  for (const origin of list('allowed-origin')) {
    if (!/^https?:\/\/[^/]+$/.test(origin)) {
      throw new UsageError(`--allowed-origin must be an origin (scheme://host[:port]), got "${origin}"`);
    }
  }
  return {
    ...parseListen(listen),
    ...(key !== undefined &&
      cert !== undefined && { tls: { keyPath: absolute(key), certPath: absolute(cert) } }),
    allowedOrigins: list('allowed-origin'),
    allowedHosts: list('allowed-host'),
  };
}
