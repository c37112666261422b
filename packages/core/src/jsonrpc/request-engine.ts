import { type Logger, silentLogger } from '../ports/logger.js';
import type { InboundNotification, InboundRequest } from './messages.js';
import { ProtocolError } from './protocol-error.js';
import { findIdKey, idKey, type RequestId } from './request-id.js';

type Json = Record<string, unknown>;

/** What a handler returns for a request it answers later (a subscription): see {@link RequestContext.keepOpen}. */
export class KeptOpen {
  declare private readonly brand: 'kept open';
}
const KEPT_OPEN = new KeptOpen();

/** What a handler knows of its request's life. */
export interface RequestContext {
  /** Aborted when the peer cancels the request. */
  readonly signal: AbortSignal;
  /**
   * True once the peer cancelled the request. Under the `silent` rule
   * nothing more may then be sent for it (progress included).
   */
  readonly cancelled: boolean;
  /**
   * The request stays in flight after the handler returns, unanswered
   * (its id taken, counted in `maxInFlight`), until {@link RequestEngine.closeOpen}
   * answers it or the peer cancels it. Returns the {@link KeptOpen} mark,
   * which the handler then returns; a handler that returns anything else, or
   * throws, is answered as usual. Call it before the handler's last await
   * (say, before an acknowledgement is sent), so that a `closeOpen` in
   * between answers the request, once: what the handler returns then is
   * not sent.
   */
  keepOpen(): KeptOpen;
}

/** Serves one request: resolves with its result, or throws (a {@link ProtocolError} crosses the wire as it is). */
export type RequestHandler = (
  request: InboundRequest,
  context: RequestContext,
) => Promise<Json | KeptOpen> | Json | KeptOpen;

/**
 * How the peer cancels a request: a notification `method` whose
 * `params.requestId` names it.
 * - `silent` (MCP `notifications/cancelled`): a cancelled request is never
 *   answered; a queued one is dropped, a running one is aborted and its id
 *   is free at once.
 * - `answered` (ACP `$/cancel_request`): a running request is aborted and
 *   still answered once, with what its handler then returns or throws (ACP:
 *   -32800 when it stopped early); its id stays taken until then. A queued
 *   request is not the engine's to cancel: the notification is not taken.
 */
export interface CancellationRule {
  readonly method: string;
  readonly mode: 'silent' | 'answered';
  /** The abort reason's message, e.g. "cancelled by the client". */
  readonly reason: string;
}

/** Flow control: how full the answer channel is, how to hold its input back, and the limits. */
export interface RequestFlow {
  /** Output the peer has not taken yet, in bytes. Default none. */
  readonly backlogBytes?: () => number;
  /** `true`: stop reading the peer (requests are waiting); `false`: read again. Called on changes only. */
  readonly hold?: (held: boolean) => void;
  /** Default {@link MAX_BACKLOG_BYTES}. */
  readonly maxBacklogBytes?: number;
  /** Answer-producing requests running at once. Default {@link MAX_ACTIVE_REQUESTS}. */
  readonly maxActiveRequests?: number;
  /** Requests in flight at once, of any kind (open ones included). Default {@link MAX_IN_FLIGHT}. */
  readonly maxInFlight?: number;
}

export interface RequestEngineOptions {
  /** Sends one message to the peer; a rejection (the channel closed) is logged, not thrown. */
  readonly send: (message: Json) => Promise<void>;
  readonly cancellation: CancellationRule;
  readonly flow?: RequestFlow;
  /**
   * False for requests whose answer is small whatever they do (waits,
   * subscriptions): they do not count toward `maxActiveRequests`. Default:
   * every request produces an answer.
   */
  readonly producesAnswer?: (request: InboundRequest) => boolean;
  /**
   * Serves a request whose method has no handler (MCP: the era's error,
   * else -32601). Without one such a request is not taken.
   */
  readonly fallback?: RequestHandler;
  readonly logger?: Logger;
}

/** 8 MiB, the stdio transport's own pause threshold. */
export const MAX_BACKLOG_BYTES = 8 * 1024 * 1024;
export const MAX_ACTIVE_REQUESTS = 16;
export const MAX_IN_FLIGHT = 256;

interface Flight {
  readonly id: RequestId;
  readonly controller: AbortController;
  cancelled: boolean;
  /** Kept open by its handler: answered by `closeOpen`. */
  open: boolean;
  /** Answered by `closeOpen`: nothing more is sent for it. */
  closed: boolean;
}

/**
 * The JSON-RPC request engine under the MCP server and the ACP terminal
 * dispatcher: a handler map, the requests in flight, duplicate ids,
 * cancellation and flow control. It never touches a channel: the owner
 * routes classified messages to {@link takeRequest} and
 * {@link takeNotification}, calls {@link pump} when the backlog shrank, and
 * answers what the engine does not take.
 *
 * Contract:
 * - Requests run concurrently; answers go out in completion order.
 * - A request whose id is in flight or queued is answered -32600 and not
 *   run. An id is free again once its answer was sent (or, under the
 *   `silent` rule, once it was cancelled).
 * - A handler's {@link ProtocolError} is answered as it is; any other
 *   failure is logged and answered -32603 with its message.
 * - Flow control: requests start in arrival order, and only while the
 *   backlog is below `maxBacklogBytes`, fewer than `maxInFlight` requests are
 *   in flight and, for answer-producing ones, fewer than `maxActiveRequests`
 *   run; while some wait, `hold(true)` asks the owner to stop reading the
 *   peer, so memory stays bounded by the limits. Every request that ends
 *   pumps the queue.
 * - Cancellation follows the {@link CancellationRule}. A cancellation that
 *   names no request of ours is not taken (its owner may pass it on).
 */
export class RequestEngine {
  private readonly handlers = new Map<string, RequestHandler>();
  private readonly inFlight = new Map<string, Flight>();
  /** Requests received and not started yet, in arrival order, by id key. */
  private readonly waiting = new Map<string, InboundRequest>();
  /** Every started request until it answered (or was cancelled): what `settle` waits for. */
  private readonly running = new Set<Promise<void>>();
  /** Answer-producing requests running (see `maxActiveRequests`). */
  private active = 0;
  private held = false;
  private readonly logger: Logger;
  private readonly maxBacklogBytes: number;
  private readonly maxActive: number;
  private readonly maxInFlight: number;

  constructor(private readonly options: RequestEngineOptions) {
    this.logger = options.logger ?? silentLogger;
    this.maxBacklogBytes = options.flow?.maxBacklogBytes ?? MAX_BACKLOG_BYTES;
    this.maxActive = options.flow?.maxActiveRequests ?? MAX_ACTIVE_REQUESTS;
    this.maxInFlight = options.flow?.maxInFlight ?? MAX_IN_FLIGHT;
  }

  /** Registers the handler of one method (replacing any). */
  on(method: string, handler: RequestHandler): this {
    this.handlers.set(method, handler);
    return this;
  }

  /** Requests not answered yet: running, kept open or queued. */
  get pending(): number {
    return this.inFlight.size + this.waiting.size;
  }

  /** True when the engine serves the request (it is then answered, or refused as a duplicate). */
  takeRequest(request: InboundRequest): boolean {
    if (!this.handlers.has(request.method) && this.options.fallback === undefined) return false;
    const key = idKey(request.id);
    if (this.inFlight.has(key) || this.waiting.has(key)) {
      void this.answerError(
        request.id,
        ProtocolError.invalidRequest('this id is already used by a request in flight; it was not run'),
      );
      return true;
    }
    this.waiting.set(key, request);
    this.pump();
    return true;
  }

  /** True when the notification cancelled a request of ours (see {@link CancellationRule}). */
  takeNotification(notification: InboundNotification): boolean {
    const rule = this.options.cancellation;
    if (notification.method !== rule.method) return false;
    const requestId = notification.params?.requestId;
    if (rule.mode === 'silent') {
      const queued = findIdKey(this.waiting.keys(), requestId);
      if (queued !== undefined && this.waiting.delete(queued)) {
        // Not started yet: it never runs and is never answered.
        this.pump();
        return true;
      }
    }
    const key = findIdKey(this.inFlight.keys(), requestId);
    const flight = key === undefined ? undefined : this.inFlight.get(key);
    if (key === undefined || flight === undefined) return false;
    flight.cancelled = true;
    flight.controller.abort(new Error(rule.reason));
    this.logger.debug({ requestId }, 'request cancelled by the peer');
    if (rule.mode === 'silent') {
      // Its slot is free now: a request queued behind a full `maxInFlight` (say, behind open
      // subscriptions, whose handlers returned long ago) must not wait for some other message.
      this.inFlight.delete(key);
      this.pump();
    }
    return true;
  }

  /** Starts waiting requests while the flow-control limits allow; holds the input while some wait. */
  pump(): void {
    const backlogBytes = this.options.flow?.backlogBytes;
    for (const [key, next] of this.waiting) {
      const heavy = this.options.producesAnswer?.(next) ?? true;
      if ((backlogBytes?.() ?? 0) >= this.maxBacklogBytes || this.inFlight.size >= this.maxInFlight) break;
      if (heavy && this.active >= this.maxActive) break;
      this.waiting.delete(key);
      if (heavy) this.active++;
      // Every request that ends frees an in-flight slot (a wait or a subscription too), so every end
      // pumps: a queued request must not wait for some other message to arrive.
      const running = this.run(next, key).finally(() => {
        this.running.delete(running);
        if (heavy) this.active--;
        this.pump();
      });
      this.running.add(running);
    }
    const hold = this.waiting.size > 0;
    if (hold !== this.held) {
      this.held = hold;
      this.options.flow?.hold?.(hold);
    }
  }

  /**
   * Resolves once every started request has answered, or after `timeoutMs`.
   * Requests kept open are not waited for.
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

  /** Answers every request kept open with `result(id)` and frees their ids. */
  async closeOpen(result: (id: RequestId) => Json): Promise<void> {
    const closing: Promise<void>[] = [];
    for (const [key, flight] of this.inFlight) {
      if (!flight.open) continue;
      this.inFlight.delete(key);
      flight.closed = true;
      closing.push(this.answer({ jsonrpc: '2.0', id: flight.id, result: result(flight.id) }));
    }
    await Promise.all(closing);
  }

  /** Sends an error answer (for what the owner refuses itself: invalid messages, framing errors). */
  answerError(id: RequestId | null, error: ProtocolError): Promise<void> {
    return this.answer({ jsonrpc: '2.0', id, error: error.toWire() });
  }

  private async run(request: InboundRequest, key: string): Promise<void> {
    const flight: Flight = {
      id: request.id,
      controller: new AbortController(),
      cancelled: false,
      open: false,
      closed: false,
    };
    this.inFlight.set(key, flight);
    const silent = this.options.cancellation.mode === 'silent';
    const context: RequestContext = {
      signal: flight.controller.signal,
      get cancelled() {
        return flight.cancelled;
      },
      keepOpen: () => {
        flight.open = true;
        return KEPT_OPEN;
      },
    };
    try {
      const handler = this.handlers.get(request.method) ?? this.options.fallback;
      if (handler === undefined) throw ProtocolError.methodNotFound(request.method);
      const result = await handler(request, context);
      flight.open = result instanceof KeptOpen;
      if (flight.open || flight.closed || (silent && flight.cancelled)) return;
      await this.answer({ jsonrpc: '2.0', id: request.id, result });
    } catch (error) {
      flight.open = false;
      if (flight.closed || (silent && flight.cancelled)) return;
      if (!(error instanceof ProtocolError)) {
        this.logger.error({ err: error, method: request.method }, 'request failed');
      }
      await this.answerError(request.id, error instanceof ProtocolError ? error : internalError(error));
    } finally {
      if (!flight.open && this.inFlight.get(key) === flight) this.inFlight.delete(key);
    }
  }

  private async answer(message: Json): Promise<void> {
    try {
      await this.options.send(message);
    } catch (error) {
      this.logger.debug({ err: error }, 'could not answer: the channel is closed');
    }
  }
}

function internalError(error: unknown): ProtocolError {
  const message =
    typeof error === 'object' && error !== null && typeof (error as Error).message === 'string'
      ? (error as Error).message
      : String(error);
  return ProtocolError.internal(message);
}
