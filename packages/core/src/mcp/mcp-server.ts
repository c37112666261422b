import type { CallerContext, TerminalHost } from '@termgate/termhost';
import type { InboundRequest, Params } from '../jsonrpc/messages.js';
import { OutgoingRequests } from '../jsonrpc/outgoing-requests.js';
import { ProtocolError } from '../jsonrpc/protocol-error.js';
import {
  KeptOpen,
  MAX_ACTIVE_REQUESTS,
  MAX_BACKLOG_BYTES,
  MAX_IN_FLIGHT,
  type RequestContext,
  RequestEngine,
} from '../jsonrpc/request-engine.js';
import type { RequestId } from '../jsonrpc/request-id.js';
import { serveChannel } from '../jsonrpc/serve-channel.js';
import { type Logger, silentLogger } from '../ports/logger.js';
import type { MessageChannel } from '../ports/message-channel.js';
import type { SchemaValidator } from '../ports/schema-validator.js';
import { DEFAULT_APPROVAL_TIMEOUT_MS, McpApprovals, type ModernApproval } from './approval/mcp-approvals.js';
import { RequestStateSealer, type RequestStateSealerOptions } from './approval/request-state.js';
import { ProgressRelay } from './progress-relay.js';
import {
  LEGACY_PROTOCOL_VERSION,
  META_SERVER_INFO,
  META_SUBSCRIPTION_ID,
  SUPPORTED_MODERN_VERSIONS,
} from './protocol-versions.js';
import {
  type ClientInfo,
  classifyEra,
  legacyClientInfo,
  type RequestEra,
  requestMeta,
} from './request-era.js';
import type { OutputBudgetLimits } from './tools/output-budget.js';
import { TerminalTools } from './tools/terminal-tools.js';
import { type SandboxFacts, serverInstructions, toolDefinitions } from './tools/tool-definitions.js';
import { toCallToolResult, toolError } from './tools/tool-result.js';

export interface ServerInfo {
  readonly name: string;
  readonly version: string;
}

export interface McpServerOptions {
  readonly serverInfo: ServerInfo;
  readonly instructions?: string;
  /**
   * The policy's sandbox, for the instructions and the tool descriptions
   * (`null`: off); called on the first request that needs it, and awaited,
   * as it is known once the policy loaded. A rejection counts as off.
   */
  readonly sandbox?: () => Promise<SandboxFacts | null>;
  readonly logger?: Logger;
  /** How long clients may cache `server/discover` and `tools/list`. Default one hour: they never change while a server runs. */
  readonly cacheTtlMs?: number;
  readonly defaultWaitSeconds?: number;
  /** How long terminal_create waits when the call names no `waitSeconds`. */
  readonly defaultCreateWaitSeconds?: number;
  /** Character budgets of tool results and progress updates; a promise while the policy loads. */
  readonly outputBudget?: OutputBudgetLimits | Promise<OutputBudgetLimits>;
  readonly progressIntervalMs?: number;
  /**
   * Flow control: a request is started only while the channel's unread
   * output is below this many bytes. Default {@link MAX_BACKLOG_BYTES}.
   */
  readonly maxBacklogBytes?: number;
  /**
   * Requests that produce a sizeable answer (everything but waits and
   * subscriptions) running at once. Default {@link MAX_ACTIVE_REQUESTS}.
   */
  readonly maxActiveRequests?: number;
  /** Requests in flight at once, of any kind. Default {@link MAX_IN_FLIGHT}. */
  readonly maxInFlight?: number;
  /**
   * How long a legacy `elicitation/create` (an `ask`) waits for the person's
   * answer; none by then is a denial. Default {@link DEFAULT_APPROVAL_TIMEOUT_MS}.
   */
  readonly approvalTimeoutMs?: number;
  /** Expiry (and clock) of the modern era's sealed `requestState`. Default 5 minutes. */
  readonly requestState?: RequestStateSealerOptions;
}

type Result = Record<string, unknown>;

/**
 * What a transport knows of a connection's caller, for every request on it:
 * `scope` isolates terminals (`CallerContext.scope`; an HTTP transport
 * passes its authorized principal's id). Absent: the default scope, as on stdio.
 */
export interface ConnectionContext {
  readonly scope?: string;
}

/**
 * A tools-only MCP server that serves MCP 2026-07-28 (stateless, `_meta` on
 * every request) and 2025-11-25 (`initialize`) side by side, choosing the
 * era per request. It speaks to the TerminalHost port only.
 */
export class McpServer {
  private readonly tools: TerminalTools;
  private readonly logger: Logger;
  /** One per server: its requestState key is this process's, and its single-use memory spans connections. */
  private readonly approvals: McpApprovals;

  constructor(
    host: TerminalHost,
    validator: SchemaValidator,
    private readonly options: McpServerOptions,
  ) {
    this.logger = options.logger ?? silentLogger;
    this.approvals = new McpApprovals(
      new RequestStateSealer(options.requestState),
      options.approvalTimeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS,
    );
    this.tools = new TerminalTools(host, validator, {
      ...(options.defaultWaitSeconds !== undefined && { defaultWaitSeconds: options.defaultWaitSeconds }),
      ...(options.defaultCreateWaitSeconds !== undefined && {
        defaultCreateWaitSeconds: options.defaultCreateWaitSeconds,
      }),
      ...(options.outputBudget !== undefined && { outputBudget: options.outputBudget }),
    });
  }

  /** Starts serving one channel; every request on it runs with the connection's context. */
  connect(channel: MessageChannel, context: ConnectionContext = {}): McpConnection {
    return new McpConnection(channel, this.tools, this.options, this.logger, this.approvals, context);
  }
}

/** A method's handler in each era it exists in; in the other era it is an unknown method. */
interface EraMethod {
  readonly modern?: (
    request: InboundRequest,
    era: Extract<RequestEra, { era: 'modern' }>,
    context: RequestContext,
  ) => Promise<Result | KeptOpen>;
  readonly legacy?: (request: InboundRequest, context: RequestContext) => Promise<Result>;
}

/**
 * One client connection: the MCP methods, registered on a
 * {@link RequestEngine} that holds the ids, the flow control and the
 * cancellation (`notifications/cancelled`: a cancelled request is never
 * answered).
 *
 * Contract:
 * - Requests are handled concurrently; responses go out in completion order.
 * - A request whose id is already in flight is answered `-32600` and not run.
 * - Flow control: requests are started in arrival order, and only while the
 *   client's unread output is below `maxBacklogBytes`, fewer than
 *   `maxActiveRequests` answer-producing requests run, and fewer than
 *   `maxInFlight` requests are in flight; until then the channel is paused,
 *   so a client that stops reading stops being read, and memory stays
 *   bounded by those limits.
 * - Notifications are never answered.
 * - After a request is cancelled, nothing more is sent for it.
 * - Each request's era is its own (`classifyEra`): a method the era does
 *   not have, and a malformed or unserved modern envelope, are errors.
 * - `shutdown` answers every open `subscriptions/listen` with a complete
 *   result; the caller then closes the channel.
 * - Approvals (a create the policy puts on `ask`): a modern request whose
 *   `_meta` client capabilities declare form elicitation is answered
 *   `input_required` (see `McpApprovals.modern`); a legacy call from a
 *   client that declared elicitation in `initialize` sends
 *   `elicitation/create` while it is pending. Otherwise an ask is refused as
 *   "approval needed but could not be asked for".
 */
export class McpConnection {
  private readonly engine: RequestEngine;
  /** The clientInfo of the latest legacy `initialize`, for the audit trail only. */
  private legacyClient: ClientInfo | undefined;
  /** The capabilities of the latest legacy `initialize`: whether a legacy call may elicit. */
  private legacyCapabilities: unknown;
  /** Server → client requests (legacy elicitations). */
  private readonly outgoing: OutgoingRequests;
  private shuttingDown = false;
  private readonly cacheTtlMs: number;

  constructor(
    private readonly channel: MessageChannel,
    private readonly tools: TerminalTools,
    private readonly options: McpServerOptions,
    logger: Logger,
    private readonly approvals: McpApprovals,
    private readonly connectionContext: ConnectionContext = {},
  ) {
    this.outgoing = new OutgoingRequests((message) => this.channel.send(message));
    this.cacheTtlMs = options.cacheTtlMs ?? 3_600_000;
    this.engine = new RequestEngine({
      send: (message) => channel.send(message),
      logger,
      cancellation: { method: 'notifications/cancelled', mode: 'silent', reason: 'cancelled by the client' },
      flow: {
        backlogBytes: () => channel.backlogBytes?.() ?? 0,
        hold: (held) => (held ? channel.pause?.() : channel.resume?.()),
        maxBacklogBytes: options.maxBacklogBytes ?? MAX_BACKLOG_BYTES,
        maxActiveRequests: options.maxActiveRequests ?? MAX_ACTIVE_REQUESTS,
        maxInFlight: options.maxInFlight ?? MAX_IN_FLIGHT,
      },
      producesAnswer,
      // An unknown method is still classified first: a bad envelope is the answer.
      fallback: (request) => {
        classifyEra(request.params);
        throw ProtocolError.methodNotFound(request.method);
      },
    });
    const methods: Record<string, EraMethod> = {
      'server/discover': { modern: () => this.discover() },
      initialize: { legacy: (request) => this.initialize(request) },
      ping: { legacy: async () => ({}) },
      'tools/list': {
        modern: async (request) => ({
          ...(await this.listTools(request.params)),
          ttlMs: this.cacheTtlMs,
          cacheScope: 'public',
        }),
        legacy: (request) => this.listTools(request.params),
      },
      'tools/call': {
        modern: (request, era, context) =>
          this.callTool(request, this.withConnection(modernCaller(era)), context, 'modern'),
        legacy: (request, context) =>
          this.callTool(request, this.withConnection(this.legacyCaller()), context, 'legacy'),
      },
      'subscriptions/listen': { modern: (request, _era, context) => this.listen(request, context) },
    };
    for (const [method, byEra] of Object.entries(methods)) {
      this.engine.on(method, (request, context) => this.inEra(request, context, byEra));
    }
    serveChannel(channel, this.engine, (response) => this.outgoing.settle(response));
  }

  /**
   * Resolves once every started request has answered, or after `timeoutMs`.
   * Shutdown calls it after the terminals ended, so that a request they
   * were part of (a create waiting for its command) answers with what
   * happened before the channel closes. Open subscriptions are not waited for.
   */
  settle(timeoutMs: number): Promise<void> {
    return this.engine.settle(timeoutMs);
  }

  /** Ends open subscriptions with a complete result. Idempotent. */
  async shutdown(): Promise<void> {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    this.outgoing.closeAll();
    await this.engine.closeOpen((id) => this.listenEnd(id));
  }

  private serverInfo(): ServerInfo {
    return { name: this.options.serverInfo.name, version: this.options.serverInfo.version };
  }

  /** Runs the request's era's handler; a modern result is complete and carries the server info. */
  private async inEra(
    request: InboundRequest,
    context: RequestContext,
    byEra: EraMethod,
  ): Promise<Result | KeptOpen> {
    const era = classifyEra(request.params);
    if (era.era === 'legacy') {
      if (byEra.legacy === undefined) throw ProtocolError.methodNotFound(request.method);
      return byEra.legacy(request, context);
    }
    if (byEra.modern === undefined) throw ProtocolError.methodNotFound(request.method);
    const body = await byEra.modern(request, era, context);
    if (body instanceof KeptOpen) return body;
    const meta = body._meta as Result | undefined;
    return { resultType: 'complete', ...body, _meta: { ...meta, [META_SERVER_INFO]: this.serverInfo() } };
  }

  private async discover(): Promise<Result> {
    return {
      supportedVersions: [...SUPPORTED_MODERN_VERSIONS],
      capabilities: { tools: {} },
      instructions: this.options.instructions ?? serverInstructions(await this.sandbox()),
      ttlMs: this.cacheTtlMs,
      cacheScope: 'public',
    };
  }

  private async initialize(request: InboundRequest): Promise<Result> {
    this.legacyClient = legacyClientInfo(request.params);
    this.legacyCapabilities = request.params?.capabilities;
    return {
      protocolVersion: LEGACY_PROTOCOL_VERSION,
      capabilities: { tools: {} },
      serverInfo: this.serverInfo(),
      instructions: this.options.instructions ?? serverInstructions(await this.sandbox()),
    };
  }

  /** The connection's scope, when its transport gave one, over the request's own caller. */
  private withConnection(caller: CallerContext): CallerContext {
    const { scope } = this.connectionContext;
    return scope === undefined ? caller : { ...caller, scope };
  }

  private legacyCaller(): CallerContext {
    return {
      protocol: `mcp/${LEGACY_PROTOCOL_VERSION}`,
      ...(this.legacyClient && { clientName: this.legacyClient.name }),
      ...(this.legacyClient?.version !== undefined && { clientVersion: this.legacyClient.version }),
    };
  }

  private async listTools(params: Params | undefined): Promise<Result> {
    if (params?.cursor !== undefined) {
      throw ProtocolError.invalidParams('Invalid cursor: this server lists every tool in one page');
    }
    return { tools: toolDefinitions(await this.sandbox()).map((tool) => ({ ...tool })) };
  }

  private sandboxFacts: Promise<SandboxFacts | null> | undefined;

  /** The sandbox's facts, asked for once (see `McpServerOptions.sandbox`). */
  private sandbox(): Promise<SandboxFacts | null> {
    this.sandboxFacts ??= (this.options.sandbox?.() ?? Promise.resolve(null)).catch(() => null);
    return this.sandboxFacts;
  }

  private async callTool(
    request: InboundRequest,
    requestCaller: CallerContext,
    context: RequestContext,
    era: 'modern' | 'legacy',
  ): Promise<Result> {
    const name = request.params?.name;
    const args = request.params?.arguments ?? {};
    if (typeof name !== 'string') throw ProtocolError.invalidParams('"name" must be a string');
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      throw ProtocolError.invalidParams('"arguments" must be an object');
    }
    if (!this.tools.has(name)) throw ProtocolError.invalidParams(`Unknown tool: ${name}`);
    let approval: ModernApproval | undefined;
    let caller = requestCaller;
    if (era === 'modern') {
      approval = this.approvals.modern(
        name,
        args as Record<string, unknown>,
        request.params,
        caller.clientName,
      );
      if (approval.kind === 'refuse') return toCallToolResult(toolError(approval.message));
      if (approval.approver !== undefined) caller = { ...caller, approver: approval.approver };
    } else {
      const approver = this.approvals.legacy(
        this.outgoing,
        this.legacyCapabilities,
        context.signal,
        caller.clientName,
      );
      if (approver !== undefined) caller = { ...caller, approver };
    }
    const progressToken = requestMeta(request.params)?.progressToken;
    const wantsProgress =
      typeof progressToken === 'string' ||
      (typeof progressToken === 'number' && Number.isInteger(progressToken));
    let relay: ProgressRelay | undefined;
    const progress = (maxMessageChars: number) => {
      relay?.discard();
      relay = new ProgressRelay(
        (value, message) => {
          if (context.cancelled) return;
          return this.channel
            .send({
              jsonrpc: '2.0',
              method: 'notifications/progress',
              params: { progressToken, progress: value, message },
            })
            .catch(() => undefined);
        },
        {
          maxMessageChars,
          ...(this.options.progressIntervalMs !== undefined && {
            intervalMs: this.options.progressIntervalMs,
          }),
        },
      );
      const current = relay;
      return (chunk: Uint8Array, total: number) => current.push(chunk, total);
    };
    try {
      const outcome = await this.tools.call(name, args as Record<string, unknown>, {
        caller,
        signal: context.signal,
        ...(wantsProgress && { progress }),
      });
      // Progress for this request is flushed before its response, never after.
      (relay as ProgressRelay | undefined)?.finish();
      // A deferred question: the call ran nothing; the client asks the person and retries.
      const inputRequired = approval?.kind === 'run' ? approval.inputRequired() : null;
      if (inputRequired !== null) return inputRequired;
      return toCallToolResult(outcome);
    } finally {
      (relay as ProgressRelay | undefined)?.discard();
    }
  }

  /** Acknowledges a subscription and keeps it open until shutdown (or the client cancels it). */
  private async listen(request: InboundRequest, context: RequestContext): Promise<Result | KeptOpen> {
    if (this.shuttingDown) return this.listenEnd(request.id);
    const open = context.keepOpen();
    // termgate's tool list never changes: no notification kinds are honoured.
    await this.channel
      .send({
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: { _meta: { [META_SUBSCRIPTION_ID]: request.id }, notifications: {} },
      })
      .catch(() => undefined);
    return open;
  }

  /** The complete result that ends a subscription. */
  private listenEnd(id: RequestId): Result {
    return {
      resultType: 'complete',
      _meta: { [META_SUBSCRIPTION_ID]: id, [META_SERVER_INFO]: this.serverInfo() },
    };
  }
}

function modernCaller(era: Extract<RequestEra, { era: 'modern' }>): CallerContext {
  return {
    protocol: `mcp/${era.version}`,
    ...(era.clientInfo && { clientName: era.clientInfo.name }),
    ...(era.clientInfo?.version !== undefined && { clientVersion: era.clientInfo.version }),
  };
}

/** False for requests whose answer is small whatever they do: waits (progress is flow-controlled on its own) and subscriptions. */
function producesAnswer(request: InboundRequest): boolean {
  if (request.method === 'subscriptions/listen') return false;
  return !(request.method === 'tools/call' && request.params?.name === 'terminal_wait_for_exit');
}
