import type { Params } from '../jsonrpc/messages.js';
import { ErrorCode, ProtocolError } from '../jsonrpc/protocol-error.js';
import {
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_PROTOCOL_VERSION,
  SUPPORTED_MODERN_VERSIONS,
} from './protocol-versions.js';

export interface ClientInfo {
  readonly name: string;
  readonly version?: string;
}

export type RequestEra =
  | { readonly era: 'modern'; readonly version: string; readonly clientInfo: ClientInfo | undefined }
  | { readonly era: 'legacy' };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readClientInfo(value: unknown): ClientInfo | undefined {
  if (!isObject(value) || typeof value.name !== 'string') return undefined;
  return typeof value.version === 'string'
    ? { name: value.name, version: value.version }
    : { name: value.name };
}

/** The `_meta` object of a request's params, when there is one. */
export function requestMeta(params: Params | undefined): Record<string, unknown> | undefined {
  const meta = params?._meta;
  return isObject(meta) ? meta : undefined;
}

/**
 * Chooses the era of one request: MCP 2026-07-28 or the legacy 2025-11-25
 * (https://modelcontextprotocol.io/specification), served side by side on one
 * connection. A request is modern when its `_meta` carries the
 * protocol-version key — the claim — and legacy otherwise. Nothing earlier on
 * the connection counts: no state.
 *
 * Throws -32602 for a malformed modern envelope and -32022 for a version
 * that is not served.
 */
export function classifyEra(params: Params | undefined): RequestEra {
  const meta = requestMeta(params);
  if (meta === undefined || !(META_PROTOCOL_VERSION in meta)) return { era: 'legacy' };
  const version = meta[META_PROTOCOL_VERSION];
  if (typeof version !== 'string' || version === '') {
    throw ProtocolError.invalidParams(`_meta["${META_PROTOCOL_VERSION}"] must be a non-empty string`, {
      envelope: { key: META_PROTOCOL_VERSION, problem: 'malformed' },
    });
  }
  const capabilities = meta[META_CLIENT_CAPABILITIES];
  if (!isObject(capabilities)) {
    throw ProtocolError.invalidParams(
      `_meta["${META_CLIENT_CAPABILITIES}"] is ${capabilities === undefined ? 'missing' : 'not an object'}`,
      {
        envelope: {
          key: META_CLIENT_CAPABILITIES,
          problem: capabilities === undefined ? 'missing' : 'malformed',
        },
      },
    );
  }
  const clientInfo = meta[META_CLIENT_INFO];
  if (clientInfo !== undefined && readClientInfo(clientInfo) === undefined) {
    throw ProtocolError.invalidParams(`_meta["${META_CLIENT_INFO}"] must be an object with a string "name"`, {
      envelope: { key: META_CLIENT_INFO, problem: 'malformed' },
    });
  }
  if (!SUPPORTED_MODERN_VERSIONS.includes(version)) {
    throw new ProtocolError(ErrorCode.UnsupportedProtocolVersion, 'Unsupported protocol version', {
      supported: [...SUPPORTED_MODERN_VERSIONS],
      requested: version,
    });
  }
  return { era: 'modern', version, clientInfo: readClientInfo(clientInfo) };
}

/** The legacy `initialize` params' clientInfo, if well formed. */
export function legacyClientInfo(params: Params | undefined): ClientInfo | undefined {
  return readClientInfo(params?.clientInfo);
}
