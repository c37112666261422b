import type { ServerResponse } from 'node:http';

/**
 * One HTTP response the protocol's messages go out on: a POST's (the
 * messages for its request, then its response) or a legacy session's
 * standalone GET stream.
 *
 * Contract:
 * - A POST's response is `application/json` when its JSON-RPC response is
 *   the first message for it, and an SSE stream (`text/event-stream`, one
 *   `message` event per JSON-RPC message) as soon as anything comes first
 *   (progress, a server request); `finish` writes the response and ends.
 * - `write` resolves once the message is handed to the socket, or once the
 *   client took enough of the backlog (`drain`); never rejects (a message
 *   for a client that left is dropped).
 * - A stream whose unread output stays above zero for `stallTimeoutMs` is
 *   destroyed, as is one whose client closed it: `onGone` is called once,
 *   unless the stream was finished first. That bounds the memory a client
 *   that stops reading can hold.
 */
export class ResponseStream {
  private mode: 'pending' | 'json' | 'sse' = 'pending';
  private done = false;
  private stallTimer: NodeJS.Timeout | undefined;
  private readonly drainWaiters: (() => void)[] = [];

  constructor(
    private readonly res: ServerResponse,
    private readonly options: {
      readonly stallTimeoutMs: number;
      readonly headers?: Readonly<Record<string, string>>;
      readonly onGone: (stream: ResponseStream) => void;
      readonly ondrain: () => void;
    },
  ) {
    res.on('close', () => {
      this.clearStall();
      this.releaseWaiters();
      if (!this.done) {
        this.done = true;
        options.onGone(this);
      }
    });
    res.on('drain', () => {
      this.clearStall();
      this.releaseWaiters();
      options.ondrain();
    });
  }

  /** Output written but not yet taken by the client, in bytes. */
  backlogBytes(): number {
    return this.done ? 0 : this.res.writableLength;
  }

  get finished(): boolean {
    return this.done;
  }

  /** Opens the SSE stream now (a GET stream has no first message to wait for). */
  openEventStream(): void {
    if (this.mode !== 'pending') return;
    this.mode = 'sse';
    this.res.writeHead(200, {
      ...this.options.headers,
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
    });
    this.res.flushHeaders();
  }

  /** A message that is not this stream's final response: switches a pending POST to SSE. */
  write(message: unknown): Promise<void> {
    if (this.done) return Promise.resolve();
    this.openEventStream();
    return this.push(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  /** The final message: the JSON-RPC response of this POST's request; ends the response. */
  finish(message: unknown, status = 200): void {
    if (this.done) return;
    this.done = true;
    this.clearStall();
    if (this.mode === 'pending') {
      const body = JSON.stringify(message);
      this.res.writeHead(status, {
        ...this.options.headers,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      });
      this.res.end(body);
    } else {
      this.res.end(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
    }
    this.releaseWaiters();
  }

  /** Ends the stream without a message (a session's GET stream at close). */
  end(): void {
    if (this.done) return;
    this.done = true;
    this.clearStall();
    if (this.mode === 'pending') this.res.writeHead(204, this.options.headers);
    this.res.end();
    this.releaseWaiters();
  }

  private push(chunk: string): Promise<void> {
    if (this.res.write(chunk)) return Promise.resolve();
    this.stallTimer ??= setTimeout(() => this.res.destroy(), this.options.stallTimeoutMs);
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  private clearStall(): void {
    if (this.stallTimer !== undefined) clearTimeout(this.stallTimer);
    this.stallTimer = undefined;
  }

  private releaseWaiters(): void {
    for (const resolve of this.drainWaiters.splice(0)) resolve();
  }
}
