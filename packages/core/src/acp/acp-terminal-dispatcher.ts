import { RequestEngine, type RequestFlow } from '../jsonrpc/request-engine.js';
import { type Logger, silentLogger } from '../ports/logger.js';
import { ACP_CANCEL_REQUEST, ACP_TERMINAL_METHODS } from './acp-methods.js';
import type { AcpTerminalService } from './acp-terminal-service.js';

type Send = (message: Record<string, unknown>) => Promise<void>;

/** 8 MiB. */
export const ACP_MAX_BACKLOG_BYTES = 8 * 1024 * 1024;
export const ACP_MAX_ACTIVE_REQUESTS = 16;

/**
 * Runs the agent's `terminal/*` requests on an {@link AcpTerminalService} and
 * answers them through `send`, and routes `$/cancel_request` to them: the
 * five methods registered on a {@link RequestEngine}.
 *
 * Contract (the engine's, with ACP's choices):
 * - Only the five terminal methods are taken; any other request is the
 *   caller's.
 * - Requests run concurrently; answers go out in completion order.
 * - Every accepted request is answered exactly once: with its result, its
 *   error, or -32800 when it was cancelled and stopped early (the
 *   `answered` rule). A request whose id is already one of ours in flight
 *   is answered -32600 and not run.
 * - With a flow, requests start in arrival order and only while the answer
 *   channel's backlog is below `maxBacklogBytes` and fewer than
 *   `maxActiveRequests` answer-producing requests (all but
 *   `terminal/wait_for_exit`) run; while some wait, `hold(true)` asks the
 *   owner to stop reading the agent. Call `pump` when the backlog shrank.
 *   The number of requests in flight is not capped (`maxInFlight` is
 *   infinite unless the flow names one).
 * - A `$/cancel_request` whose id is not one of ours running is not taken,
 *   so the caller can forward it (the proxy passes it on to the editor).
 */
export class AcpTerminalDispatcher extends RequestEngine {
  constructor(service: AcpTerminalService, send: Send, logger: Logger = silentLogger, flow?: RequestFlow) {
    super({
      send,
      logger,
      cancellation: { method: ACP_CANCEL_REQUEST, mode: 'answered', reason: 'cancelled by the agent' },
      flow: {
        maxBacklogBytes: ACP_MAX_BACKLOG_BYTES,
        maxActiveRequests: ACP_MAX_ACTIVE_REQUESTS,
        maxInFlight: Number.POSITIVE_INFINITY,
        ...flow,
      },
      producesAnswer: (request) => request.method !== ACP_TERMINAL_METHODS.waitForExit,
    });
    for (const method of Object.values(ACP_TERMINAL_METHODS)) {
      this.on(method, (request, { signal }) => service.handle(method, request.params, { signal }));
    }
  }
}
