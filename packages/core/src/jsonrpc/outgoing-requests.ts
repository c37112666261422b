import { randomUUID } from 'node:crypto';
import { idKey, type RequestId } from './request-id.js';

/** Why an outgoing request got no result. */
export class OutgoingRequestError extends Error {
  override readonly name = 'OutgoingRequestError';
  constructor(
    readonly kind: 'timeout' | 'cancelled' | 'error' | 'closed',
    message: string,
    readonly error?: unknown,
  ) {
    super(message);
  }
}

export interface OutgoingRequestOptions {
  /** No response within this many ms rejects with `timeout` (and cancels the request at the peer). */
  readonly timeoutMs: number;
  /** Aborting rejects with `cancelled` and cancels the request at the peer. */
  readonly signal?: AbortSignal;
}

interface Pending {
  readonly resolve: (result: unknown) => void;
  readonly reject: (error: OutgoingRequestError) => void;
}

/**
 * Requests this side sends to its peer (server → client), with ids of its
 * own, matched to their responses.
 *
 * Contract:
 * - Ids are strings `termgate-<random UUID>`: a peer cannot predict one, so
 *   a response it provokes to a request of its own (a proxied agent's) can
 *   never be taken for the answer to ours.
 * - `request` resolves with the response's `result`, or rejects with an
 *   `OutgoingRequestError`: `error` (the peer answered with an error),
 *   `timeout`, `cancelled` (the signal aborted) or `closed`. On timeout and
 *   cancellation it sends the cancel notification for the request, and a
 *   late response is ignored.
 * - A response for an id not pending is ignored.
 */
export class OutgoingRequests {
  readonly #pending = new Map<string, Pending>();

  /**
   * `cancel` builds the notification that cancels a request at the peer:
   * MCP's `notifications/cancelled` by default (ACP passes `$/cancel_request`).
   */
  constructor(
    private readonly send: (message: Record<string, unknown>) => Promise<void>,
    private readonly cancel: (id: string, reason: string) => Record<string, unknown> = (id, reason) => ({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: id, reason },
    }),
  ) {}

  /** True when `id` names a request of ours still waiting for its response. */
  isPending(id: unknown): boolean {
    return typeof id === 'string' && this.#pending.has(idKey(id));
  }

  request(
    method: string,
    params: Record<string, unknown>,
    options: OutgoingRequestOptions,
  ): Promise<unknown> {
    const id = `termgate-${randomUUID()}`;
    const key = idKey(id);
    return new Promise<unknown>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const finish = () => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        this.#pending.delete(key);
      };
      const giveUp = (kind: 'timeout' | 'cancelled', message: string) => {
        if (!this.#pending.has(key)) return;
        finish();
        void this.send(this.cancel(id, message)).catch(() => undefined);
        reject(new OutgoingRequestError(kind, message));
      };
      const why = () =>
        options.signal?.reason instanceof Error
          ? options.signal.reason.message
          : 'the request that needed it was cancelled';
      const onAbort = () => giveUp('cancelled', why());
      if (options.signal?.aborted) {
        reject(new OutgoingRequestError('cancelled', why()));
        return;
      }
      this.#pending.set(key, {
        resolve: (result) => {
          finish();
          resolve(result);
        },
        reject: (error) => {
          finish();
          reject(error);
        },
      });
      options.signal?.addEventListener('abort', onAbort, { once: true });
      timer = setTimeout(
        () => giveUp('timeout', `no answer within ${options.timeoutMs} ms`),
        options.timeoutMs,
      );
      this.send({ jsonrpc: '2.0', id, method, params }).catch((error: unknown) => {
        this.#pending
          .get(key)
          ?.reject(new OutgoingRequestError('closed', 'could not send the request', error));
      });
    });
  }

  /** Routes a response from the peer. Returns false when no request of ours waits for it. */
  settle(response: { id?: unknown; result?: unknown; error?: unknown }): boolean {
    if (typeof response.id !== 'string') return false;
    const pending = this.#pending.get(idKey(response.id as RequestId));
    if (pending === undefined) return false;
    if ('error' in response && response.error !== undefined) {
      const message =
        typeof response.error === 'object' && response.error !== null
          ? String((response.error as { message?: unknown }).message ?? 'error')
          : 'error';
      pending.reject(
        new OutgoingRequestError('error', `the client answered with an error: ${message}`, response.error),
      );
    } else {
      pending.resolve(response.result);
    }
    return true;
  }

  /** Rejects every pending request with `closed`. */
  closeAll(): void {
    for (const pending of [...this.#pending.values()]) {
      pending.reject(new OutgoingRequestError('closed', 'the connection closed'));
    }
  }
}
