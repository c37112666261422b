import type { InboundShape } from './jsonrpc-shape.js';

/** MCP's `HeaderMismatch` (2026-07-28, Streamable HTTP only). */
export const HEADER_MISMATCH = -32020;
const INVALID_PARAMS = -32602;
const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';

export type EraDecision =
  | { readonly era: 'modern' | 'legacy' }
  | { readonly era: 'refused'; readonly code: number; readonly message: string };

function header(
  headers: Readonly<Record<string, string | string[] | undefined>>,
  name: string,
): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(',') : value?.trim();
}

/** The body field a method's `Mcp-Name` mirrors (SEP-2243), if it has one. */
function nameField(method: string): string | undefined {
  if (method === 'tools/call' || method === 'prompts/get') return 'name';
  if (method === 'resources/read') return 'uri';
  return undefined;
}

/**
 * The era of one POSTed message, and the HTTP-layer checks of the
 * stateless era (MCP 2026-07-28, `basic/transports`): a request that claims
 * it in `_meta` must carry `MCP-Protocol-Version` equal to that claim, an
 * `Mcp-Method` equal to its method and, for a named method, an `Mcp-Name`
 * equal to the name (values are case-sensitive; surrounding whitespace is
 * not part of a field value). A request whose header names a stateless
 * version without the `_meta` claim is refused -32602 (its envelope is
 * invalid). Refusals are HTTP 400, with -32020 for a header that disagrees. Anything else is the legacy era (2025-11-25), where
 * `MCP-Protocol-Version` is informative only.
 */
export function decideEra(
  shape: Exclude<InboundShape, { kind: 'invalid' }>,
  headers: Readonly<Record<string, string | string[] | undefined>>,
  modernVersions: readonly string[],
): EraDecision {
  const versionHeader = header(headers, 'mcp-protocol-version');
  const headerIsModern = versionHeader !== undefined && modernVersions.includes(versionHeader);
  if (shape.kind !== 'request') return { era: headerIsModern ? 'modern' : 'legacy' };
  const meta = shape.params?._meta;
  const claim =
    typeof meta === 'object' && meta !== null && META_PROTOCOL_VERSION in meta
      ? (meta as Record<string, unknown>)[META_PROTOCOL_VERSION]
      : undefined;
  if (claim === undefined) {
    if (!headerIsModern) return { era: 'legacy' };
    return {
      era: 'refused',
      code: INVALID_PARAMS,
      message: `Invalid params: MCP-Protocol-Version ${versionHeader} requires _meta["${META_PROTOCOL_VERSION}"]`,
    };
  }
  if (versionHeader === undefined) return refuse('Missing MCP-Protocol-Version header');
  if (versionHeader !== claim) {
    return refuse(
      `MCP-Protocol-Version header ${versionHeader} does not match _meta["${META_PROTOCOL_VERSION}"]`,
    );
  }
  const method = header(headers, 'mcp-method');
  if (method === undefined) return refuse('Missing Mcp-Method header');
  if (method !== shape.method)
    return refuse(`Mcp-Method header "${method}" does not match the body's method`);
  const field = nameField(shape.method);
  const value = field === undefined ? undefined : shape.params?.[field];
  if (typeof value === 'string') {
    const name = header(headers, 'mcp-name');
    if (name === undefined) return refuse('Missing Mcp-Name header');
    if (name !== value) return refuse(`Mcp-Name header "${name}" does not match the body's ${field}`);
  }
  return { era: 'modern' };
}

function refuse(message: string): EraDecision {
  return { era: 'refused', code: HEADER_MISMATCH, message };
}

/**
 * The HTTP status of a stateless-era JSON-RPC error response (2026-07-28
 * `basic/transports`): -32601 is 404; a request the server will not take as
 * sent (-32700, -32600, -32602, -32020, -32021, -32022) is 400; an
 * internal error 500; a result is 200.
 */
export function statusOfModernAnswer(message: unknown): number {
  const error = (message as { error?: { code?: unknown } } | null)?.error;
  if (error === undefined || error === null) return 200;
  switch (error.code) {
    case -32601:
      return 404;
    case -32700:
    case -32600:
    case -32602:
    case -32020:
    case -32021:
    case -32022:
      return 400;
    case -32603:
      return 500;
    default:
      return 200;
  }
}
