/**
 * Public API of @termgate/core: the protocol core. It speaks to the
 * termhost's TerminalHost port only. Its adapters are not exported here but
 * as `@termgate/core/adapters`, for the composition root. Named exports only.
 */
export { AcpErrorCode } from './acp/acp-error-codes.js';
export {
  ACP_CANCEL_REQUEST,
  ACP_PROTOCOL,
  ACP_SESSION_UPDATE,
  ACP_TERMINAL_METHODS,
  type AcpTerminalMethod,
  acpSessionScope,
  isAcpTerminalMethod,
} from './acp/acp-methods.js';
export {
  AcpProxy,
  AcpProxyConnection,
  type AcpProxyOptions,
  type AcpProxySide,
  withTerminalCapability,
} from './acp/acp-proxy.js';
export { AcpTerminalDispatcher } from './acp/acp-terminal-dispatcher.js';
export { ACP_TERMINAL_PARAMS_SCHEMAS } from './acp/acp-terminal-schemas.js';
export {
  type AcpHandleOptions,
  type AcpResult,
  AcpTerminalService,
  type AcpTerminalServiceOptions,
  type PolicyDeniedData,
  type TerminalNotFoundData,
} from './acp/acp-terminal-service.js';
export { DEFAULT_DISPLAY_BYTES, exitLine, OMITTED_MARKER, TerminalMirror } from './acp/terminal-mirror.js';
export {
  DEFAULT_DISPLAY_INTERVAL_MS,
  ToolCallTerminalRelay,
  type ToolCallTerminalRelayOptions,
} from './acp/tool-call-terminal-relay.js';
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
  DEFAULT_MAX_OUTPUT_CHARS,
  DEFAULT_OUTPUT_CHARS,
  MIN_OUTPUT_CHARS,
  type OutputBudgetLimits,
  outputBudgetFor,
} from './mcp/tools/output-budget.js';
export {
  DEFAULT_CREATE_WAIT_SECONDS,
  type SandboxFacts,
  SERVER_INSTRUCTIONS,
  sandboxSentences,
  serverInstructions,
  TOOL_DEFINITIONS,
  TOOL_NAMES,
  type ToolName,
  toolDefinitions,
} from './mcp/tools/tool-definitions.js';
export { type Logger, silentLogger } from './ports/logger.js';
export type { ChannelFramingError, MessageChannel } from './ports/message-channel.js';
export type { SchemaValidator, SchemaViolation, Validate } from './ports/schema-validator.js';
