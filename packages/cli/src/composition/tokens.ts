import type { Readable, Writable } from 'node:stream';
import type { McpServer } from '@termgate/core';
import type { StreamableHttpServer } from '@termgate/transport-http';
import type { StdioTransport, StdioTransportOptions } from '@termgate/transport-stdio';

/**
 * The composition root's own service identifiers (the ports' identifiers
 * live with their ports: GATE, PROCESS_SPAWNER, TERMINAL_OBSERVER and
 * TERMINAL_HOST in @termgate/termhost; AUDIT_SINK in @termgate/audit; COMMAND_JUDGE in
 * @termgate/policy). Every one is bound in composition-root.ts or
 * policy-module.ts and resolved by the graph of `serve` or `acp-proxy`.
 */

/** The parsed `ServeConfig` (acp-proxy's config extends it). */
export const SERVE_CONFIG: unique symbol = Symbol.for('termgate.ServeConfig');
/** The root pino logger (the chosen level and format). */
export const ROOT_LOGGER: unique symbol = Symbol.for('termgate.RootLogger');
/** `Notices`: the operator's lines (policy, sandbox, warnings; the audit anchors printed whatever the log level). */
export const NOTICES: unique symbol = Symbol.for('termgate.Notices');
export const SCHEMA_VALIDATOR: unique symbol = Symbol.for('termgate.SchemaValidator');
/** `ShutdownHook[]`, run in order once every terminal ended. */
export const SHUTDOWN_HOOKS: unique symbol = Symbol.for('termgate.ShutdownHooks');
/** The started policy side (`PolicyRuntime`): resolving it starts the gate, and fails closed. */
export const POLICY_RUNTIME: unique symbol = Symbol.for('termgate.PolicyRuntime');
/** `PolicyStartup`: starts the policy side on first use, from the lazily loaded policy-module.ts. */
export const POLICY_STARTUP: unique symbol = Symbol.for('termgate.PolicyStartup');
/** `McpServerOptions` of `serve`'s `McpServer`. */
export const MCP_SERVER_OPTIONS: unique symbol = Symbol.for('termgate.McpServerOptions');
/** `AcpProxyOptions` of `acp-proxy`'s `AcpProxy`. */
export const ACP_PROXY_OPTIONS: unique symbol = Symbol.for('termgate.AcpProxyOptions');
/** `PolicyParts`: the loaded policy, the judge, the audit sink and the sandbox, started together (policy-parts.ts). */
export const POLICY_PARTS: unique symbol = Symbol.for('termgate.PolicyParts');
/** `PolicyInfo`: the loaded policy's path and sha256, as the gate records them. */
export const POLICY_INFO: unique symbol = Symbol.for('termgate.PolicyInfo');
/** `PolicyGateOptions`: the gate's sandbox profiler, when the sandbox is on. */
export const POLICY_GATE_OPTIONS: unique symbol = Symbol.for('termgate.PolicyGateOptions');
/** The loaded, validated and self-tested policy (`LoadedPolicy`). */
export const LOADED_POLICY: unique symbol = Symbol.for('termgate.LoadedPolicy');
/** The started sandbox (`SandboxRuntime`), or null when the policy's sandbox mode is `off`. */
export const SANDBOX_RUNTIME: unique symbol = Symbol.for('termgate.SandboxRuntime');
/** `CompositionOptions`: how this process's graph differs (serve or acp-proxy, test seams). */
export const COMPOSITION_OPTIONS: unique symbol = Symbol.for('termgate.CompositionOptions');

/** `OpenStdioTransport`: frames a pair of streams (the protocol's, the agent's) as JSON lines. */
export const OPEN_STDIO_TRANSPORT: unique symbol = Symbol.for('termgate.OpenStdioTransport');

/** Runs once every terminal ended, in order, during shutdown (e.g. the audit trail's stop record). */
export type ShutdownHook = (reason: string) => void | Promise<void>;
/** Bound by policy-module.ts; `PolicyStartup` resolves it once that module is loaded. */
export const POLICY_RUNTIME_STARTED: unique symbol = Symbol.for('termgate.PolicyRuntimeStarted');

/** A `StdioTransport` over the given streams, made by the container. */
export type OpenStdioTransport = (
  input: Readable,
  output: Writable,
  options?: StdioTransportOptions,
) => StdioTransport;

/** `OpenHttpTransport`: the Streamable HTTP server of `serve --http` over the given MCP server (not yet listening). */
export const OPEN_HTTP_TRANSPORT: unique symbol = Symbol.for('termgate.OpenHttpTransport');

/** The configured `StreamableHttpServer` serving `server`, made by the container (http-transport.ts). */
export type OpenHttpTransport = (server: McpServer) => StreamableHttpServer;
