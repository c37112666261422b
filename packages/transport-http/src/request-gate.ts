import type { IncomingMessage } from 'node:http';
import { isLoopbackOrigin } from './http-transport-options.js';

/**
 * DNS-rebinding protection (MCP `basic/transports`, "Security Warning"):
 * the `Host` header must name an allowed host (its port is not compared),
 * and an `Origin` header, when present, must be a loopback origin or an
 * allowed one. A
 * request without `Host` is refused; `Origin: null` is refused.
 * Returns the reason for a refusal, or null.
 */
export function refuseForeignRequest(
  request: IncomingMessage,
  allowedHosts: readonly string[],
  allowedOrigins: readonly string[],
): string | null {
  const host = request.headers.host;
  if (host === undefined || host === '') return 'missing Host header';
  if (!allowedHosts.includes(hostName(host))) return `Host "${host}" is not allowed`;
  const origin = request.headers.origin;
  if (origin === undefined) return null;
  let normalized: string;
  try {
    normalized = new URL(origin).origin;
  } catch {
    return `Origin "${origin}" is not allowed`;
  }
  if (normalized === 'null') return `Origin "${origin}" is not allowed`;
  return isLoopbackOrigin(normalized) || allowedOrigins.includes(normalized)
    ? null
    : `Origin "${origin}" is not allowed`;
}

/** `example.com:8080` → `example.com`; `[::1]:80` → `[::1]`; lower case. */
export function hostName(host: string): string {
  const lower = host.trim().toLowerCase();
  if (lower.startsWith('[')) {
    const end = lower.indexOf(']');
    return end < 0 ? lower : lower.slice(0, end + 1);
  }
  const colon = lower.lastIndexOf(':');
  return colon < 0 ? lower : lower.slice(0, colon);
}
