/** Who made an HTTP request, once authorized. `id` is stable per principal (issuer + subject) and becomes the terminal scope. */
export interface Principal {
  readonly id: string;
  readonly subject: string;
  readonly issuer: string;
  readonly scopes: readonly string[];
}

export type AuthorizationResult =
  | { readonly ok: true; readonly principal: Principal }
  | {
      readonly ok: false;
      readonly status: 401 | 403;
      readonly wwwAuthenticate: string;
      readonly error: string;
    };

/** Decides each HTTP request from its headers (Authorization). Contract: never throws; anything it cannot verify is `ok: false`. */
export interface RequestAuthorizer {
  authorize(headers: Readonly<Record<string, string | string[] | undefined>>): Promise<AuthorizationResult>;
}

/**
 * The transport asks it before anything of the request is read past its
 * headers (and before the `Origin`/`Host` checks pass it on): every MCP POST,
 * GET and DELETE. `ok: false` is answered with its `status`, its
 * `WWW-Authenticate` header and `{ error }` as JSON, and nothing reaches the
 * protocol. Without an authorizer the transport refuses to listen beyond
 * loopback.
 */
export const REQUEST_AUTHORIZER: unique symbol = Symbol.for('termgate.RequestAuthorizer');
