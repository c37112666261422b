/** A JSON-RPC id as it came: string or number (null only on error responses we write). */
export type WireId = string | number;

/** One inbound JSON-RPC message, as far as the transport must know it to route it. */
export type InboundShape =
  | {
      readonly kind: 'request';
      readonly id: WireId;
      readonly method: string;
      readonly params: Record<string, unknown> | undefined;
    }
  | {
      readonly kind: 'notification';
      readonly method: string;
      readonly params: Record<string, unknown> | undefined;
    }
  | { readonly kind: 'response'; readonly id: WireId }
  | { readonly kind: 'invalid'; readonly reason: string };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Classifies a parsed POST body: the transport routes by kind and id, the
 * protocol core judges everything else (methods, params, eras). A batch
 * (array) is invalid: neither revision served here has batches.
 */
export function shapeOf(body: unknown): InboundShape {
  if (Array.isArray(body)) return { kind: 'invalid', reason: 'JSON-RPC batches are not supported' };
  if (!isObject(body) || body.jsonrpc !== '2.0') {
    return { kind: 'invalid', reason: 'not a JSON-RPC 2.0 message' };
  }
  const { id, method } = body;
  const params = isObject(body.params) ? body.params : undefined;
  if (body.params !== undefined && params === undefined) {
    return { kind: 'invalid', reason: '"params" must be an object' };
  }
  const idOk = typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
  if (typeof method === 'string') {
    if (id === undefined) return { kind: 'notification', method, params };
    if (!idOk) return { kind: 'invalid', reason: '"id" must be a string or a number' };
    return { kind: 'request', id: id as WireId, method, params };
  }
  if (idOk && ('result' in body || 'error' in body)) return { kind: 'response', id: id as WireId };
  return { kind: 'invalid', reason: 'neither a request, a notification nor a response' };
}

/** The key a message's id is routed by (1 and "1" are different ids). */
export function idKey(id: unknown): string {
  return JSON.stringify(id);
}

/** A JSON-RPC error response. */
export function errorBody(id: WireId | null, code: number, message: string): Record<string, unknown> {
  return { jsonrpc: '2.0', id, error: { code, message } };
}
