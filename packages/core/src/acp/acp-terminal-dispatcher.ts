import type { InboundNotification, InboundRequest, RequestId } from '../jsonrpc/messages.js';
import { ProtocolError } from '../jsonrpc/protocol-error.js';
import { type Logger, silentLogger } from '../ports/logger.js';
import { ACP_CANCEL_REQUEST, isAcpTerminalMethod } from './acp-methods.js';
import type { AcpTerminalService } from './acp-terminal-service.js';

type Send = (message: Record<string, unknown>) => Promise<void>;

function idKey(id: RequestId): string {
  return `${typeof id}:${id}`;
}

/**
 * Runs the agent's `terminal/*` requests on an {@link AcpTerminalService} and
 * answers them through `send`, and routes `$/cancel_request` to them.
 *
 * Contract:
 * - Requests run concurrently; answers go out in completion order.
 * - Every accepted request is answered exactly once: with its result, its
 *   error, or -32800 when it was cancelled and stopped early.
 * - A `$/cancel_request` whose id is not one of ours is not taken, so the
 *   caller can forward it (the proxy passes it on to the editor).
 */
export class AcpTerminalDispatcher {
  private readonly inFlight = new Map<string, AbortController>();

  constructor(
    private readonly service: AcpTerminalService,
    private readonly send: Send,
    private readonly logger: Logger = silentLogger,
  ) {}

  /** True when the request is a terminal method; it is then served and answered. */
  takeRequest(request: InboundRequest): boolean {
    if (!isAcpTerminalMethod(request.method)) return false;
    void this.run(request);
    return true;
  }

  /** True when the notification cancels one of our pending requests. */
  takeNotification(notification: InboundNotification): boolean {
    if (notification.method !== ACP_CANCEL_REQUEST) return false;
    const requestId = notification.params?.requestId;
    if (typeof requestId !== 'string' && typeof requestId !== 'number') return false;
    const controller = this.inFlight.get(idKey(requestId));
    if (controller === undefined) return false;
    controller.abort(new Error('cancelled by the agent'));
    this.logger.debug({ requestId }, 'terminal request cancelled by the agent');
    return true;
  }

  /** Requests not answered yet. */
  get pending(): number {
    return this.inFlight.size;
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
    try {
      await this.send(reply);
    } catch (error) {
      this.logger.debug({ err: error }, 'could not answer: the channel is closed');
    }
  }
}
