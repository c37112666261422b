import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * The Landlock tier's way to the allowlist proxy (no network namespace, so
 * no relay inside one): a TCP listener on the host's 127.0.0.1 whose every
 * connection is piped to the proxy's Unix socket. Commands reach it on
 * `port` (the one TCP port Landlock lets them connect to); anyone else on the
 * host who connects meets the proxy's per-terminal credential (407).
 */
export class LoopbackRelay {
  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly open: Set<Socket>,
  ) {}

  /** Listens on 127.0.0.1 on a port the kernel picks, relaying to `socketPath`. */
  static listen(socketPath: string): Promise<LoopbackRelay> {
    const open = new Set<Socket>();
    const server = createServer({ noDelay: true }, (client) => {
      const upstream = createConnection(socketPath);
      for (const socket of [client, upstream]) {
        open.add(socket);
        socket.once('close', () => open.delete(socket));
      }
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      client.pipe(upstream).pipe(client);
    });
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: '127.0.0.1', port: 0 }, () => {
        server.off('error', reject);
        const address = server.address();
        if (address === null || typeof address === 'string') {
          server.close();
          reject(new Error('the proxy relay has no TCP port'));
          return;
        }
        resolve(new LoopbackRelay(server, address.port, open));
      });
    });
  }

  /** Calls `listener` when the listener fails after it started (never an unhandled 'error'). */
  onError(listener: (error: Error) => void): void {
    this.server.on('error', listener);
  }

  /** Stops listening and drops every open connection. */
  close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.open) socket.destroy();
    return closed;
  }
}
