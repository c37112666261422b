import { ProtocolError } from './protocol-error.js';
import { isAnyId, isRequestId, type RequestId } from './request-id.js';

export { isRequestId, type RequestId } from './request-id.js';
export type Params = Readonly<Record<string, unknown>>;

export interface InboundRequest {
  readonly kind: 'request';
  readonly id: RequestId;
  readonly method: string;
  /** `undefined` when the request had no `params`. */
  readonly params: Params | undefined;
}

export interface InboundNotification {
  readonly kind: 'notification';
  readonly method: string;
  readonly params: Params | undefined;
}

/** A response from the peer, to a request this side sent (an MCP elicitation, an ACP permission request). */
export interface InboundResponse {
  readonly kind: 'response';
  readonly id: unknown;
  readonly result?: unknown;
  readonly error?: unknown;
}

export interface InvalidMessage {
  readonly kind: 'invalid';
  readonly error: ProtocolError;
  /** The id, when it could be read; the error answer echoes it. */
  readonly id: RequestId | null;
}

export type InboundMessage = InboundRequest | InboundNotification | InboundResponse | InvalidMessage;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Sorts one parsed JSON value into what it is. Never throws.
 * A batch (array) is not part of either MCP revision: it is invalid.
 */
export function classify(message: unknown): InboundMessage {
  if (Array.isArray(message)) {
    return {
      kind: 'invalid',
      id: null,
      error: ProtocolError.invalidRequest('JSON-RPC batches are not supported'),
    };
  }
  if (!isObject(message)) {
    return {
      kind: 'invalid',
      id: null,
      error: ProtocolError.invalidRequest('a message must be a JSON object'),
    };
  }
  const hasId = 'id' in message;
  const id = hasId && isRequestId(message.id) ? message.id : null;
  // An error about the id itself still echoes it when it is a string or a number (`1e-400`, `1.5`).
  const echo = hasId && isAnyId(message.id) ? message.id : null;
  if (message.jsonrpc !== '2.0') {
    return { kind: 'invalid', id, error: ProtocolError.invalidRequest('"jsonrpc" must be "2.0"') };
  }
  if (!('method' in message)) {
    if (hasId && ('result' in message || 'error' in message)) {
      return {
        kind: 'response',
        id: message.id,
        ...('result' in message && { result: message.result }),
        ...('error' in message && { error: message.error }),
      };
    }
    return { kind: 'invalid', id, error: ProtocolError.invalidRequest('missing "method"') };
  }
  if (typeof message.method !== 'string') {
    return { kind: 'invalid', id, error: ProtocolError.invalidRequest('"method" must be a string') };
  }
  if (hasId && id === null) {
    return {
      kind: 'invalid',
      id: echo,
      error: ProtocolError.invalidRequest('"id" must be a string or an integer'),
    };
  }
  const params = message.params;
  if (params !== undefined && !isObject(params)) {
    return { kind: 'invalid', id, error: ProtocolError.invalidRequest('"params" must be an object') };
  }
  if (id === null) return { kind: 'notification', method: message.method, params };
  return { kind: 'request', id, method: message.method, params };
}
