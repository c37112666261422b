import { idKey, type WireId } from './jsonrpc-shape.js';
import type { HttpMessageChannel } from './ports/mcp-endpoint.js';
import type { ResponseStream } from './response-stream.js';

/** Inbound messages held while the protocol paused the channel, at most. */
export const MAX_HELD_MESSAGES = 256;

/**
 * The message channel of one connection (a modern request, or a legacy
 * session): inbound messages come from POST bodies, outbound ones are
 * routed to the response streams open on it.
 *
 * Routing contract:
 * - A response goes to the stream of the POST that carried its request,
 *   and ends it; a response for no open stream is dropped.
 * - A `notifications/progress` goes to the stream whose request carried
 *   its `progressToken`.
 * - Anything else (a server request, another notification) goes to the
 *   newest open POST stream, else the session's GET stream, else is dropped.
 * - A stream that goes away before its response cancels its requests: the
 *   protocol receives `notifications/cancelled` for each (Streamable HTTP:
 *   closing the stream is cancellation).
 * - While paused, inbound messages are held in order (at most
 *   {@link MAX_HELD_MESSAGES}; `deliver` answers false beyond) and handed
 *   over on `resume`.
 */
export class HttpChannel implements HttpMessageChannel {
  onmessage?: (message: unknown) => void;
  onclose?: () => void;
  ondrain?: () => void;

  private readonly byId = new Map<string, ResponseStream>();
  private readonly byProgressToken = new Map<string, ResponseStream>();
  private readonly open: ResponseStream[] = [];
  private eventStream: ResponseStream | undefined;
  private readonly held: unknown[] = [];
  private paused = false;
  private started = false;
  private closed = false;

  /** `statusOf`: the HTTP status of a response sent as JSON (the stateless era maps errors; legacy answers 200). */
  constructor(private readonly statusOf: (response: unknown) => number = () => 200) {}

  start(): void {
    this.started = true;
    this.flush();
  }

  /** True while a request with this id waits for its response here. */
  isPending(id: WireId): boolean {
    return this.byId.has(idKey(id));
  }

  /** Streams still open (POSTs waiting, the GET stream). */
  openStreams(): number {
    return this.open.length + (this.eventStream && !this.eventStream.finished ? 1 : 0);
  }

  /**
   * Hands one inbound message to the protocol. A request names the stream
   * its answer goes to (and its progress token, if any). False when the
   * channel is closed or holds too many messages already.
   */
  deliver(
    message: unknown,
    stream?: { readonly id: WireId; readonly progressToken: unknown; readonly on: ResponseStream },
  ): boolean {
    if (this.closed || this.held.length >= MAX_HELD_MESSAGES) return false;
    if (stream !== undefined) {
      this.byId.set(idKey(stream.id), stream.on);
      if (typeof stream.progressToken === 'string' || typeof stream.progressToken === 'number') {
        this.byProgressToken.set(idKey(stream.progressToken), stream.on);
      }
      this.open.push(stream.on);
    }
    this.held.push(message);
    this.flush();
    return true;
  }

  /** The session's standalone GET stream (legacy era); replaces none: one at a time. */
  attachEventStream(stream: ResponseStream): boolean {
    if (this.eventStream !== undefined && !this.eventStream.finished) return false;
    this.eventStream = stream;
    return true;
  }

  /** Called when a stream went away: its requests still unanswered are cancelled. */
  abandon(stream: ResponseStream): void {
    if (stream === this.eventStream) {
      this.eventStream = undefined;
      return;
    }
    this.forget(stream);
    for (const [key, target] of [...this.byId]) {
      if (target !== stream) continue;
      this.byId.delete(key);
      this.held.push({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: JSON.parse(key) as WireId, reason: 'the HTTP response stream was closed' },
      });
    }
    this.flush();
  }

  send(message: unknown): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the HTTP channel is closed'));
    const record =
      typeof message === 'object' && message !== null ? (message as Record<string, unknown>) : {};
    if (!('method' in record) && 'id' in record) {
      const key = idKey(record.id);
      const target = this.byId.get(key);
      this.byId.delete(key);
      if (target !== undefined) {
        this.forget(target);
        target.finish(message, this.statusOf(message));
      }
      return Promise.resolve();
    }
    if (record.method === 'notifications/progress') {
      const params = record.params as Record<string, unknown> | undefined;
      const target = this.byProgressToken.get(idKey(params?.progressToken));
      if (target !== undefined && !target.finished) return target.write(message);
    }
    const target = this.open.at(-1) ?? (this.eventStream?.finished === false ? this.eventStream : undefined);
    return target === undefined ? Promise.resolve() : target.write(message);
  }

  backlogBytes(): number {
    let bytes = this.eventStream?.backlogBytes() ?? 0;
    for (const stream of this.open) bytes += stream.backlogBytes();
    return bytes;
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.flush();
  }

  /** Ends every open stream (the requests on them are not answered) and the channel. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.held.length = 0;
    for (const stream of this.open.splice(0)) stream.end();
    this.eventStream?.end();
    this.byId.clear();
    this.byProgressToken.clear();
    this.onclose?.();
  }

  private forget(stream: ResponseStream): void {
    const at = this.open.indexOf(stream);
    if (at >= 0) this.open.splice(at, 1);
    for (const [key, target] of [...this.byProgressToken]) {
      if (target === stream) this.byProgressToken.delete(key);
    }
  }

  private flush(): void {
    while (this.started && !this.paused && !this.closed && this.held.length > 0) {
      this.onmessage?.(this.held.shift());
    }
  }
}
