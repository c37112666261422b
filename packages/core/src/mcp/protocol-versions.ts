/** The modern, stateless revision served per request through `_meta`. */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';
/** The legacy revision answered to every `initialize`. */
export const LEGACY_PROTOCOL_VERSION = '2025-11-25';
export const SUPPORTED_MODERN_VERSIONS: readonly string[] = [MODERN_PROTOCOL_VERSION];

export const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
export const META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
export const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
export const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
export const META_SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
