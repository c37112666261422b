import type { CallerContext, TerminalHost } from '@termgate/termhost';
import { classify, type InboundRequest, type Params } from '../jsonrpc/messages.js';
import { OutgoingRequests } from '../jsonrpc/outgoing-requests.js';
import { ProtocolError } from '../jsonrpc/protocol-error.js';
import { findIdKey, idKey, type RequestId } from '../jsonrpc/request-id.js';
import { type Logger, silentLogger } from '../ports/logger.js';
import type { ChannelFramingError, MessageChannel } from '../ports/message-channel.js';
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

/** 8 MiB, the stdio transport's own pause threshold. */
export const MAX_BACKLOG_BYTES = 8 * 1024 * 1024;
export const MAX_ACTIVE_REQUESTS = 16;
export const MAX_IN_FLIGHT = 256;

type Result = Record<string, unknown>;

interface InFlight {
  readonly controller: AbortController;
  /** Set once the client cancelled: nothing more may be sent for this request. */
  cancelled: boolean;
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

  /** Starts serving one channel. */
  connect(channel: MessageChannel): McpConnection {
    return new McpConnection(channel, this.tools, this.options, this.logger, this.approvals);
  }
}

/**
 * One client connection.
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
  private readonly inFlight = new Map<string, InFlight>();
  private readonly listens = new Map<string, RequestId>();
  /** The clientInfo of the latest legacy `initialize`, for the audit trail only. */
  private legacyClient: ClientInfo | undefined;
  /** The capabilities of the latest legacy `initialize`: whether a legacy call may elicit. */
  private legacyCapabilities: unknown;
  /** Server → client requests (legacy elicitations). */
  private readonly outgoing: OutgoingRequests;
  private shuttingDown = false;
  private readonly cacheTtlMs: number;
  /** Requests received and not started yet (flow control), in arrival order. */
  private readonly waiting: InboundRequest[] = [];
  private readonly waitingKeys = new Set<string>();
  /** Answer-producing requests running (see `maxActiveRequests`). */
  private active = 0;
  /** Every started request until it answered (or was cancelled): what `settle` waits for. */
  private readonly running = new Set<Promise<void>>();
  private readonly maxBacklogBytes: number;
  private readonly maxActive: number;
  private readonly maxInFlight: number;

  constructor(
    private readonly channel: MessageChannel,
    private readonly tools: TerminalTools,
    private readonly options: McpServerOptions,
    private readonly logger: Logger,
    private readonly approvals: McpApprovals,
  ) {
    this.outgoing = new OutgoingRequests((message) => this.channel.send(message));
    this.cacheTtlMs = options.cacheTtlMs ?? 3_600_000;
    this.maxBacklogBytes = options.maxBacklogBytes ?? MAX_BACKLOG_BYTES;
    this.maxActive = options.maxActiveRequests ?? MAX_ACTIVE_REQUESTS;
    this.maxInFlight = options.maxInFlight ?? MAX_IN_FLIGHT;
    channel.ondrain = () => this.pump();
    channel.onmessage = (message) => this.receive(message);
    channel.onframingerror = (error) => this.framingError(error);
    channel.start();
  }

  /**
   * Resolves once every started request has answered, or after `timeoutMs`.
   * Shutdown calls it after the terminals ended, so that a request they
   * were part of (a create waiting for its command) answers with what
   * happened before the channel closes. Open subscriptions are not waited for.
   */
  async settle(timeoutMs: number): Promise<void> {
    const pending = [...this.running];
    if (pending.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    await Promise.race([Promise.allSettled(pending), expired]);
    clearTimeout(timer);
  }

  /** Ends open subscriptions with a complete result. Idempotent. */
  async shutdown(): Promise<void> {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    this.outgoing.closeAll();
    const closing = [...this.listens.entries()].map(([key, id]) => {
      this.listens.delete(key);
      this.inFlight.delete(key);
      return this.respond(id, {
        resultType: 'complete',
        _meta: { [META_SUBSCRIPTION_ID]: id, [META_SERVER_INFO]: this.serverInfo() },
      });
    });
    await Promise.all(closing);
  }

  private serverInfo(): ServerInfo {
    return { name: this.options.serverInfo.name, version: this.options.serverInfo.version };
  }

  private receive(raw: unknown): void {
    const message = classify(raw);
    switch (message.kind) {
      case 'invalid':
        void this.respondError(message.id, message.error);
        return;
      case 'response':
        this.outgoing.settle(message);
        return;
      case 'notification':
        this.notification(message.method, message.params);
        return;
      case 'request': {
        const key = idKey(message.id);
        if (this.inFlight.has(key) || this.waitingKeys.has(key)) {
          void this.respondError(
            message.id,
            ProtocolError.invalidRequest('this id is already used by a request in flight; it was not run'),
          );
          return;
        }
        this.waiting.push(message);
        this.waitingKeys.add(key);
        this.pump();
        return;
      }
    }
  }

  /** Starts waiting requests while the flow-control limits allow; pauses the channel while some wait. */
  private pump(): void {
    while (this.waiting.length > 0) {
      const next = this.waiting[0]!;
      const heavy = producesAnswer(next);
      const backlog = this.channel.backlogBytes?.() ?? 0;
      if (backlog >= this.maxBacklogBytes || this.inFlight.size >= this.maxInFlight) break;
      if (heavy && this.active >= this.maxActive) break;
      this.waiting.shift();
      this.waitingKeys.delete(idKey(next.id));
      if (heavy) this.active++;
      // Every request that ends frees an in-flight slot (a wait or a subscription too), so every end
      // pumps: a queued request must not wait for some other message to arrive.
      const running = this.request(next).finally(() => {
        this.running.delete(running);
        if (heavy) this.active--;
        this.pump();
      });
      this.running.add(running);
    }
    if (this.waiting.length > 0) this.channel.pause?.();
    else this.channel.resume?.();
  }

  private framingError(error: ChannelFramingError): void {
    const wire =
      error.kind === 'parse-error'
        ? ProtocolError.parseError(error.message)
        : ProtocolError.invalidRequest(
            `message of ${error.bytes} bytes exceeds the ${error.maxLineBytes}-byte line limit and was discarded`,
          );
    void this.respondError(null, wire);
  }

  private notification(method: string, params: Params | undefined): void {
    if (method !== 'notifications/cancelled') return;
    const queued = findIdKey(this.waitingKeys, params?.requestId);
    if (queued !== undefined && this.waitingKeys.delete(queued)) {
      // Not started yet: it never runs and is never answered.
      const index = this.waiting.findIndex((request) => idKey(request.id) === queued);
      if (index !== -1) this.waiting.splice(index, 1);
      this.pump();
      return;
    }
    const key = findIdKey(this.inFlight.keys(), params?.requestId);
    if (key === undefined) return;
    const requestId = params?.requestId;
    const flight = this.inFlight.get(key);
    if (!flight) return;
    flight.cancelled = true;
    flight.controller.abort(new Error('cancelled by the client'));
    this.inFlight.delete(key);
    this.listens.delete(key);
    this.logger.debug({ requestId }, 'request cancelled by the client');
  }

  private async request(request: InboundRequest): Promise<void> {
    const key = idKey(request.id);
    const flight: InFlight = { controller: new AbortController(), cancelled: false };
    this.inFlight.set(key, flight);
    let keepOpen = false;
    try {
      const era = classifyEra(request.params);
      if (era.era === 'modern' && request.method === 'subscriptions/listen') {
        keepOpen = true;
        await this.listen(request, key);
        return;
      }
      const result =
        era.era === 'modern' ? await this.modern(request, era, flight) : await this.legacy(request, flight);
      if (!flight.cancelled) await this.respond(request.id, result);
    } catch (error) {
      if (flight.cancelled) return;
      if (error instanceof ProtocolError) {
        await this.respondError(request.id, error);
      } else {
        this.logger.error({ err: error, method: request.method }, 'request failed');
        await this.respondError(
          request.id,
          ProtocolError.internal((error as Error).message ?? String(error)),
        );
      }
    } finally {
      if (!keepOpen && this.inFlight.get(key) === flight) this.inFlight.delete(key);
    }
  }

  private async modern(
    request: InboundRequest,
    era: Extract<RequestEra, { era: 'modern' }>,
    flight: InFlight,
  ): Promise<Result> {
    const caller: CallerContext = {
      protocol: `mcp/${era.version}`,
      ...(era.clientInfo && { clientName: era.clientInfo.name }),
      ...(era.clientInfo?.version !== undefined && { clientVersion: era.clientInfo.version }),
    };
    let body: Result;
    switch (request.method) {
      case 'server/discover':
        body = {
          supportedVersions: [...SUPPORTED_MODERN_VERSIONS],
          capabilities: { tools: {} },
          instructions: this.options.instructions ?? serverInstructions(await this.sandbox()),
          ttlMs: this.cacheTtlMs,
          cacheScope: 'public',
        };
        break;
      case 'tools/list':
        body = { ...(await this.listTools(request.params)), ttlMs: this.cacheTtlMs, cacheScope: 'public' };
        break;
      case 'tools/call':
        body = await this.callTool(request, caller, flight, 'modern');
        break;
      default:
        throw ProtocolError.methodNotFound(request.method);
    }
    const meta = body._meta as Result | undefined;
    return { resultType: 'complete', ...body, _meta: { ...meta, [META_SERVER_INFO]: this.serverInfo() } };
  }

  private async legacy(request: InboundRequest, flight: InFlight): Promise<Result> {
    switch (request.method) {
      case 'initialize':
        this.legacyClient = legacyClientInfo(request.params);
        this.legacyCapabilities = request.params?.capabilities;
        return {
          protocolVersion: LEGACY_PROTOCOL_VERSION,
          capabilities: { tools: {} },
          serverInfo: this.serverInfo(),
          instructions: this.options.instructions ?? serverInstructions(await this.sandbox()),
        };
      case 'ping':
        return {};
      case 'tools/list':
        return this.listTools(request.params);
      case 'tools/call': {
        const caller: CallerContext = {
          protocol: `mcp/${LEGACY_PROTOCOL_VERSION}`,
          ...(this.legacyClient && { clientName: this.legacyClient.name }),
          ...(this.legacyClient?.version !== undefined && { clientVersion: this.legacyClient.version }),
        };
        return this.callTool(request, caller, flight, 'legacy');
      }
      default:
        throw ProtocolError.methodNotFound(request.method);
    }
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
    flight: InFlight,
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
        flight.controller.signal,
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
          if (flight.cancelled) return;
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
        signal: flight.controller.signal,
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

  private async listen(request: InboundRequest, key: string): Promise<void> {
    if (this.shuttingDown) {
      await this.respond(request.id, {
        resultType: 'complete',
        _meta: { [META_SUBSCRIPTION_ID]: request.id, [META_SERVER_INFO]: this.serverInfo() },
      });
      return;
    }
    this.listens.set(key, request.id);
    // termgate's tool list never changes: no notification kinds are honoured.
    await this.send({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { _meta: { [META_SUBSCRIPTION_ID]: request.id }, notifications: {} },
    });
  }

  private respond(id: RequestId, result: Result): Promise<void> {
    return this.send({ jsonrpc: '2.0', id, result });
  }

  private respondError(id: RequestId | null, error: ProtocolError): Promise<void> {
    return this.send({ jsonrpc: '2.0', id, error: error.toWire() });
  }

  private async send(message: Result): Promise<void> {
    try {
      await this.channel.send(message);
    } catch (error) {
      this.logger.debug({ err: error }, 'could not send: the channel is closed');
    }
  }
}

/** False for requests whose answer is small whatever they do: waits (progress is flow-controlled on its own) and subscriptions. */
function producesAnswer(request: InboundRequest): boolean {
  if (request.method === 'subscriptions/listen') return false;
  return !(request.method === 'tools/call' && request.params?.name === 'terminal_wait_for_exit');
}
