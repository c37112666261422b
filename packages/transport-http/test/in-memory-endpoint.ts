/**
 * An in-memory `McpEndpoint` (our own port) for the transport's tests: it
 * records each connection's context and answers a few methods:
 * `echo` (its params), `flood` (progress notifications, each awaited, until
 * cancelled or `maxSends`), `whoami` (the connection's scope).
 */
import type { ConnectionContext, HttpMessageChannel, McpEndpoint, ServedConnection } from '../src/index.js';

interface Request {
  readonly id: string | number;
  readonly method: string;
  readonly params?: Record<string, unknown>;
}

export class InMemoryEndpoint implements McpEndpoint {
  readonly contexts: ConnectionContext[] = [];
  readonly cancelled: unknown[] = [];
  /** Progress notifications whose `send` resolved (handed to the socket). */
  floodSent = 0;

  connect(channel: HttpMessageChannel, context: ConnectionContext): ServedConnection {
    this.contexts.push(context);
    const stopped = new Set<unknown>();
    channel.onmessage = (raw) => {
      const message = raw as Request & { method: string; params?: Record<string, unknown> };
      if (message.method === 'notifications/cancelled') {
        this.cancelled.push(message.params?.requestId);
        stopped.add(message.params?.requestId);
        return;
      }
      if (message.id === undefined) return;
      void this.answer(channel, message, context, stopped);
    };
    channel.start();
    return { shutdown: async () => undefined, settle: async () => undefined };
  }

  private async answer(
    channel: HttpMessageChannel,
    request: Request,
    context: ConnectionContext,
    stopped: Set<unknown>,
  ): Promise<void> {
    const reply = (result: unknown) =>
      channel.send({ jsonrpc: '2.0', id: request.id, result }).catch(() => undefined);
    switch (request.method) {
      case 'initialize':
        return void (await reply({ protocolVersion: '2025-11-25', capabilities: {} }));
      case 'whoami':
        return void (await reply({ scope: context.scope ?? null }));
      case 'flood': {
        const token = (request.params?._meta as Record<string, unknown> | undefined)?.progressToken;
        const chunk = 'x'.repeat(64 * 1024);
        for (let i = 0; i < 10_000 && !stopped.has(request.id); i += 1) {
          await channel
            .send({
              jsonrpc: '2.0',
              method: 'notifications/progress',
              params: { progressToken: token, progress: i, message: chunk },
            })
            .catch(() => undefined);
          if (!stopped.has(request.id)) this.floodSent += 1;
        }
        return void (await reply({ sent: this.floodSent }));
      }
      default:
        return void (await reply({ echo: request.params ?? null }));
    }
  }
}
