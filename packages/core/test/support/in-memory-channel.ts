import type { ChannelFramingError, MessageChannel } from '../../src/ports/message-channel.js';

/** The client end of an in-memory channel: what the server sent, in order. */
export class TestClient {
  readonly received: Record<string, unknown>[] = [];
  private waiters: (() => void)[] = [];

  constructor(private readonly channel: InMemoryChannel) {}

  send(message: unknown): void {
    this.channel.deliver(message);
  }

  framingError(error: ChannelFramingError): void {
    this.channel.onframingerror?.(error);
  }

  push(message: Record<string, unknown>): void {
    this.received.push(message);
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /** Resolves with the first received message matching `predicate` (already received or future). */
  async waitFor(predicate: (m: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
    for (;;) {
      const found = this.received.find(predicate);
      if (found) return found;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  response(id: string | number): Promise<Record<string, unknown>> {
    return this.waitFor((m) => m.id === id && ('result' in m || 'error' in m));
  }

  /** Sends a request and resolves with its response. */
  async request(
    id: string | number,
    method: string,
    params?: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    this.send(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });
    return this.response(id);
  }
}

/** A MessageChannel whose peer is a TestClient in the same process. */
export class InMemoryChannel implements MessageChannel {
  onmessage?: (message: unknown) => void;
  onframingerror?: (error: ChannelFramingError) => void;
  onclose?: () => void;
  readonly client = new TestClient(this);
  closed = false;

  start(): void {}

  deliver(message: unknown): void {
    // Round-trip through JSON like a real wire, so no object is shared.
    this.onmessage?.(JSON.parse(JSON.stringify(message)));
  }

  async send(message: unknown): Promise<void> {
    if (this.closed) throw new Error('closed');
    this.client.push(JSON.parse(JSON.stringify(message)));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.onclose?.();
  }
}
