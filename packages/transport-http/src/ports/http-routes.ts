/** What an extra GET route answers. */
export interface HttpRouteResponse {
  readonly status: number;
  /** Response headers; `content-type` defaults to `application/json`. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly body: string;
}

/** The request as a route sees it: its path (without the query) and its headers. */
export interface HttpRouteRequest {
  readonly path: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/**
 * One extra GET route beside the MCP endpoint, e.g. RFC 9728's
 * `/.well-known/oauth-protected-resource` (and its path-suffixed form, with
 * `prefix: true`).
 *
 * Contract: a route is served without authorization (it is public
 * metadata) but after the `Host` check (an `Origin` is not required); it
 * never throws (a rejection is answered 500 and logged); `path` is matched
 * exactly, or as a prefix when `prefix` is set; the MCP endpoint's own path
 * cannot be taken by a route.
 */
export interface HttpGetRoute {
  readonly path: string;
  readonly prefix?: boolean;
  respond(request: HttpRouteRequest): HttpRouteResponse | Promise<HttpRouteResponse>;
}

/** The extra GET routes (`readonly HttpGetRoute[]`) the transport serves; none when unbound. */
export const HTTP_GET_ROUTES: unique symbol = Symbol.for('termgate.HttpGetRoutes');
