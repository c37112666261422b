/**
 * Public API of @termgate/core: the protocol core. It speaks to the
 * termhost's TerminalHost port only. Named exports only.
 */
export { AjvSchemaValidator } from './adapters/ajv-schema-validator.js';
export { classify, type InboundMessage, type RequestId } from './jsonrpc/messages.js';
export { ErrorCode, ProtocolError } from './jsonrpc/protocol-error.js';
export { McpConnection, McpServer, type McpServerOptions, type ServerInfo } from './mcp/mcp-server.js';
export { ProgressRelay, type ProgressRelayOptions } from './mcp/progress-relay.js';
export {
  LEGACY_PROTOCOL_VERSION,
  MODERN_PROTOCOL_VERSION,
  SUPPORTED_MODERN_VERSIONS,
} from './mcp/protocol-versions.js';
export {
  SERVER_INSTRUCTIONS,
  TOOL_DEFINITIONS,
  TOOL_NAMES,
  type ToolName,
} from './mcp/tools/tool-definitions.js';
export { type Logger, silentLogger } from './ports/logger.js';
export type { ChannelFramingError, MessageChannel } from './ports/message-channel.js';
export type { SchemaValidator, SchemaViolation, Validate } from './ports/schema-validator.js';
