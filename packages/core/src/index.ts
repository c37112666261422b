/**
 * Public API of @termgate/core: the protocol core. It speaks to the
 * termhost's TerminalHost port only. What the composition root (the CLI)
 * builds and passes: the MCP server, the ACP proxy, their options, and the
 * ports they are given. Its adapters are not exported here but as
 * `@termgate/core/adapters`. Named exports only; the package's own tests
 * import the rest from its `src/` modules.
 */
export { AcpProxy, type AcpProxyOptions } from './acp/acp-proxy.js';
export {
  type ConnectionContext,
  McpServer,
  type McpServerOptions,
  type ServerInfo,
} from './mcp/mcp-server.js';
export { outputBudgetFor } from './mcp/tools/output-budget.js';
export type { Logger } from './ports/logger.js';
export type { ChannelFramingError, MessageChannel } from './ports/message-channel.js';
export type { SchemaValidator, SchemaViolation, Validate } from './ports/schema-validator.js';
