import { LosslessNumber } from 'lossless-json';

/**
 * A JSON-RPC id as the peer sent it. The stdio transport delivers a numeric
 * id as a `LosslessNumber` holding its exact text (so that it is echoed byte
 * for byte); in-memory channels may deliver plain numbers.
 */
export type RequestId = string | number | LosslessNumber;

/** A string, or a number whose value is an integer (`1e2` and `12345678901234567890123` are; `1.5` and `1e-400` are not). */
export function isRequestId(value: unknown): value is RequestId {
  if (typeof value === 'string') return true;
  if (typeof value === 'number') return Number.isInteger(value);
  return value instanceof LosslessNumber && isIntegerText(value.value);
}

/** Any value a peer may have meant as an id (a string or any JSON number), for echoing it in an error. */
export function isAnyId(value: unknown): value is RequestId {
  return typeof value === 'string' || typeof value === 'number' || value instanceof LosslessNumber;
}

/**
 * The key of an id in a table of requests in flight: exact (`n:1e2` and
 * `n:100` differ, as they do on the wire), strings and numbers apart.
 */
export function idKey(id: RequestId): string {
  if (typeof id === 'string') return `s:${id}`;
  return `n:${id instanceof LosslessNumber ? id.value : String(id)}`;
}

/**
 * Finds the key of `requestId` as a later message names it (a cancellation's
 * `requestId` is nested, so it arrives as a double): the exact key first, else
 * the one in-flight numeric id with the same double value.
 */
export function findIdKey(keys: Iterable<string>, requestId: unknown): string | undefined {
  if (typeof requestId === 'string') return `s:${requestId}`;
  if (requestId instanceof LosslessNumber) return `n:${requestId.value}`;
  if (typeof requestId !== 'number') return undefined;
  const exact = `n:${String(requestId)}`;
  let match: string | undefined;
  for (const key of keys) {
    if (key === exact) return key;
    if (match === undefined && key.startsWith('n:') && Number(key.slice(2)) === requestId) match = key;
  }
  return match;
}

/** True when the JSON number `text` denotes an integer, computed on its digits (no rounding). */
export function isIntegerText(text: string): boolean {
  const match = /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (match === null) return false;
  const digits = (match[1] ?? '') + (match[2] ?? '');
  if (/^0*$/.test(digits)) return true;
  const trailingZeros = digits.length - digits.replace(/0+$/, '').length;
  const exponent = match[3] === undefined ? 0 : Number(match[3]);
  // value = digits × 10^(exponent − fraction length); integer iff the power, after the trailing zeros, is ≥ 0.
  return exponent - (match[2]?.length ?? 0) + trailingZeros >= 0;
}
