import { readFileSync } from 'node:fs';
import type { McpServer } from '@termgate/core';
import {
  defaultAllowedHosts,
  type HttpGetRoute,
  type McpEndpoint,
  type RequestAuthorizer,
  StreamableHttpServer,
} from '@termgate/transport-http';
import type { Logger } from 'pino';
import type { ServeConfig } from '../serve/serve-config.js';
import type { OpenHttpTransport } from './tokens.js';

/** `McpServer` as the transport's endpoint: each connection runs with the principal's id as its terminal scope. */
export function mcpEndpoint(server: McpServer): McpEndpoint {
  return {
    connect: (channel, context) =>
      server.connect(channel, context.scope === undefined ? {} : { scope: context.scope }),
  };
}

/**
 * The factory of `serve --http`'s transport, from the config and, when
 * bound, the request authorizer and the extra GET routes (the
 * authorization side binds them). It throws (and serve refuses to start)
 * when the config has no HTTP part or a TLS file cannot be read.
 */
export function openHttpTransport(
  config: ServeConfig,
  logger: Logger,
  authorizer: RequestAuthorizer | undefined,
  routes: readonly HttpGetRoute[] | undefined,
): OpenHttpTransport {
  return (server) => {
    const http = config.http;
    if (http === undefined) throw new Error('serve was not configured for HTTP (--http HOST:PORT)');
    const read = (path: string, what: string) => {
      try {
        return readFileSync(path);
      } catch (error) {
        throw new Error(`cannot read the TLS ${what} ${path}: ${(error as Error).message}`);
      }
    };
    const tls = http.tls && {
      key: read(http.tls.keyPath, 'key'),
      cert: read(http.tls.certPath, 'certificate'),
    };
    return new StreamableHttpServer(
      mcpEndpoint(server),
      {
        host: http.host,
        port: http.port,
        allowedHosts: [...defaultAllowedHosts(http.host), ...http.allowedHosts],
        allowedOrigins: http.allowedOrigins,
        ...(tls && { tls }),
      },
      {
        ...(authorizer && { authorizer }),
        ...(routes && { routes }),
        logger: logger.child({ component: 'http' }),
      },
    );
  };
}
