import type { InboundNotification, InboundRequest } from '../jsonrpc/messages.js';
import { ProtocolError } from '../jsonrpc/protocol-error.js';
import { findIdKey, idKey } from '../jsonrpc/request-id.js';
import { type Logger, silentLogger } from '../ports/logger.js';
import { ACP_CANCEL_REQUEST, isAcpTerminalMethod } from './acp-methods.js';
import type { AcpTerminalService } from './acp-terminal-service.js';

type Send = (message: Record<string, unknown>) => Promise<void>;

/** Flow control of a dispatcher: how full the answer channel is, and how to hold its input back. */
export interface DispatcherFlow {
  /** Output the peer has not taken yet, in bytes. */
  readonly backlogBytes: () => number;
  /** `true`: stop reading the peer (requests are waiting); `false`: read again. */
  readonly hold: (held: boolean) => void;
  /** Default {@link ACP_MAX_BACKLOG_BYTES}. */
  readonly maxBacklogBytes?: number;
  /** Default {@link ACP_MAX_ACTIVE_REQUESTS}. */
  readonly maxActiveRequests?: number;
}

/** 8 MiB. */
export const ACP_MAX_BACKLOG_BYTES = 8 * 1024 * 1024;
export const ACP_MAX_ACTIVE_REQUESTS = 16;

/**
 * Runs the agent's `terminal/*` requests on an {@link AcpTerminalService} and
 * answers them through `send`, and routes `$/cancel_request` to them.
 *
 * Contract:
 * - Requests run concurrently; answers go out in completion order.
 * - Every accepted request is answered exactly once: with its result, its
 *   error, or -32800 when it was cancelled and stopped early. A request whose
 *   id is already one of ours in flight is answered -32600 and not run.
 * - With a {@link DispatcherFlow}, requests start in arrival order and only
 *   while the answer channel's backlog is below `maxBacklogBytes` and fewer
 *   than `maxActiveRequests` answer-producing requests (all but
 *   `terminal/wait_for_exit`) run; while some wait, `hold(true)` asks the
 *   owner to stop reading the agent. Call `pump` when the backlog shrank.
 * - A `$/cancel_request` whose id is not one of ours is not taken, so the
 *   caller can forward it (the proxy passes it on to the editor).
 */
export class AcpTerminalDispatcher {
  private readonly inFlight = new Map<string, AbortController>();
  private readonly waiting: InboundRequest[] = [];
  private active = 0;
  private held = false;

  constructor(
    private readonly service: AcpTerminalService,
    private readonly send: Send,
    private readonly logger: Logger = silentLogger,
    private readonly flow?: DispatcherFlow,
  ) {}

  /** True when the request is a terminal method; it is then served and answered. */
  takeRequest(request: InboundRequest): boolean {
    if (!isAcpTerminalMethod(request.method)) return false;
    const key = idKey(request.id);
    if (this.inFlight.has(key) || this.waiting.some((w) => idKey(w.id) === key)) {
      void this.answer({
        jsonrpc: '2.0',
        id: request.id,
        error: ProtocolError.invalidRequest(
          'this id is already used by a request in flight; it was not run',
        ).toWire(),
      });
      return true;
    }
    this.waiting.push(request);
    this.pump();
    return true;
  }

  /** True when the notification cancels one of our pending requests. */
  takeNotification(notification: InboundNotification): boolean {
    if (notification.method !== ACP_CANCEL_REQUEST) return false;
    const requestId = notification.params?.requestId;
    const key = findIdKey(this.inFlight.keys(), requestId);
    const controller = key === undefined ? undefined : this.inFlight.get(key);
    if (controller === undefined) return false;
    controller.abort(new Error('cancelled by the agent'));
    this.logger.debug({ requestId }, 'terminal request cancelled by the agent');
    return true;
  }

  /** Requests not answered yet. */
  get pending(): number {
    return this.inFlight.size + this.waiting.length;
  }

  /** Starts waiting requests while the flow limits allow. */
  pump(): void {
    const maxBacklog = this.flow?.maxBacklogBytes ?? ACP_MAX_BACKLOG_BYTES;
    const maxActive = this.flow?.maxActiveRequests ?? ACP_MAX_ACTIVE_REQUESTS;
    while (this.waiting.length > 0) {
      const next = this.waiting[0]!;
      const heavy = next.method !== 'terminal/wait_for_exit';
      if (this.flow !== undefined) {
        if (this.flow.backlogBytes() >= maxBacklog) break;
        if (heavy && this.active >= maxActive) break;
      }
      this.waiting.shift();
      if (heavy) this.active++;
      void this.run(next).finally(() => {
        if (heavy) {
          this.active--;
          this.pump();
        }
      });
    }
    const hold = this.waiting.length > 0;
    if (hold !== this.held) {
      this.held = hold;
      this.flow?.hold(hold);
    }
  }

  private async run(request: InboundRequest): Promise<void> {
    const key = idKey(request.id);
    const controller = new AbortController();
    this.inFlight.set(key, controller);
    let reply: Record<string, unknown>;
    try {
      const result = await this.service.handle(request.method as never, request.params, {
        signal: controller.signal,
      });
      reply = { jsonrpc: '2.0', id: request.id, result };
    } catch (error) {
      const wire =
        error instanceof ProtocolError
          ? error
          : ProtocolError.internal(error instanceof Error ? error.message : String(error));
      if (!(error instanceof ProtocolError)) {
        this.logger.error({ err: error, method: request.method }, 'terminal request failed');
      }
      reply = { jsonrpc: '2.0', id: request.id, error: wire.toWire() };
    } finally {
      this.inFlight.delete(key);
    }
    await this.answer(reply);
  }

  private async answer(reply: Record<string, unknown>): Promise<void> {
    try {
      await this.send(reply);
    } catch (error) {
      this.logger.debug({ err: error }, 'could not answer: the channel is closed');
    }
  }
}
