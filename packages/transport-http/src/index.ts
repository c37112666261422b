/**
 * Public API of @termgate/transport-http: MCP's Streamable HTTP transport
 * (both eras), its options and its ports (the endpoint it serves, the
 * request authorizer, extra GET routes). Named exports only.
 */

export {
  defaultAllowedHosts,
  type HttpTransportOptions,
  isLoopback,
  type ResolvedHttpOptions,
  resolveHttpOptions,
  type TlsMaterial,
} from './http-transport-options.js';
export {
  HTTP_GET_ROUTES,
  type HttpGetRoute,
  type HttpRouteRequest,
  type HttpRouteResponse,
} from './ports/http-routes.js';
export type {
  ConnectionContext,
  HttpMessageChannel,
  McpEndpoint,
  ServedConnection,
} from './ports/mcp-endpoint.js';
export {
  type AuthorizationResult,
  type Principal,
  REQUEST_AUTHORIZER,
  type RequestAuthorizer,
} from './ports/request-authorizer.js';
export {
  type ListeningAddress,
  type StreamableHttpDependencies,
  StreamableHttpServer,
  type TransportLogger,
} from './streamable-http-server.js';
