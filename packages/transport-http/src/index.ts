/**
 * Public API of @termgate/transport-http: MCP's Streamable HTTP transport
 * (both eras), its options and its ports (the endpoint it serves, the
 * request authorizer, extra GET routes). Named exports only.
 */
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
