import type { ChannelFramingError, MessageChannel } from '../../../src/ports/message-channel.js';

type Json = Record<string, unknown>;

/**
 * One end of an in-memory link: `channel` is what the code under test holds,
 * the peer is the test's side of it (what it sent, what it received).
 */
export class TestPeer {
  readonly received: Json[] = [];
  readonly channel: MessageChannel;
  private waiters: (() => void)[] = [];
  private nextId = 1;

  constructor() {
    const received = (message: unknown): void => this.push(message as Json);
    const channel: MessageChannel = {
      start: () => undefined,
      send: async (message) => {
        // Through JSON, as over a real wire.
        received(JSON.parse(JSON.stringify(message)));
      },
      close: async () => {
        channel.onclose?.();
      },
    };
    this.channel = channel;
  }

  send(message: unknown): void {
    this.channel.onmessage?.(JSON.parse(JSON.stringify(message)));
  }

  framingError(error: ChannelFramingError): void {
    this.channel.onframingerror?.(error);
  }

  /** The peer went away (end of input). */
  close(): void {
    this.channel.onclose?.();
  }

  async waitFor(predicate: (m: Json) => boolean): Promise<Json> {
    for (;;) {
      const found = this.received.find(predicate);
      if (found) return found;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  response(id: string | number): Promise<Json> {
    return this.waitFor((m) => m.id === id && ('result' in m || 'error' in m));
  }

  /** Sends a request with a fresh id and resolves with its response. */
  async request(method: string, params?: unknown): Promise<Json> {
    const id = this.nextId++;
    this.send({ jsonrpc: '2.0', id, method, ...(params !== undefined && { params }) });
    return this.response(id);
  }

  /** Sends a request and returns its id without waiting. */
  start(method: string, params?: unknown): number {
    const id = this.nextId++;
    this.send({ jsonrpc: '2.0', id, method, ...(params !== undefined && { params }) });
    return id;
  }

  private push(message: Json): void {
    this.received.push(message);
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}
