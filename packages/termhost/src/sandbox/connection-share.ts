import type { Socket } from 'node:net';

/** Connections that have not sent a whole request head yet, kept at most; the oldest beyond goes. */
export const MAX_PENDING_CONNECTIONS = 64;
/** Connections one terminal may have open through the proxy at once (tunnels and requests). */
export const MAX_CONNECTIONS_PER_TERMINAL = 32;

/**
 * The proxy's fair share between terminals. A connection carries no
 * credential until its request head arrived, so until then it is pending,
 * and anonymous; afterwards it belongs to the terminal its credential names.
 *
 * Contract:
 * - At most `maxPending` connections are pending; a new one beyond that
 *   ends the oldest pending one (not the newcomer): a flood of silent
 *   connections can only push out its own, older, connections, and a
 *   client that sends its head right after connecting (every HTTP client)
 *   is reached unless `maxPending` newer connections arrive before its head.
 * - `claim` binds a connection to a terminal at its first head and refuses
 *   (false) when that terminal has `perTerminal` connections open: one
 *   terminal cannot take more than its share of the proxy. A connection
 *   stays with the terminal of its first head; it counts until it closes.
 * - `settle` takes a connection out of the pending pool without binding it
 *   (its head was refused and it is being closed).
 */
export class ConnectionShare {
  readonly #pending = new Set<Socket>();
  readonly #owner = new WeakMap<Socket, string>();
  readonly #open = new Map<string, number>();

  constructor(
    private readonly maxPending: number = MAX_PENDING_CONNECTIONS,
    private readonly perTerminal: number = MAX_CONNECTIONS_PER_TERMINAL,
  ) {}

  /** Connections now pending (tests, diagnostics). */
  get pending(): number {
    return this.#pending.size;
  }

  /** Open connections bound to `terminalId`. */
  openFor(terminalId: string): number {
    return this.#open.get(terminalId) ?? 0;
  }

  arrived(socket: Socket): void {
    this.#pending.add(socket);
    socket.once('close', () => {
      this.#pending.delete(socket);
      const owner = this.#owner.get(socket);
      if (owner === undefined) return;
      const left = (this.#open.get(owner) ?? 1) - 1;
      if (left > 0) this.#open.set(owner, left);
      else this.#open.delete(owner);
    });
    if (this.#pending.size > this.maxPending) {
      const oldest = this.#pending.values().next().value as Socket;
      this.#pending.delete(oldest);
      oldest.destroy();
    }
  }

  claim(socket: Socket, terminalId: string): boolean {
    this.#pending.delete(socket);
    if (this.#owner.has(socket)) return true;
    const open = this.#open.get(terminalId) ?? 0;
    if (open >= this.perTerminal) return false;
    this.#open.set(terminalId, open + 1);
    this.#owner.set(socket, terminalId);
    return true;
  }

  settle(socket: Socket): void {
    this.#pending.delete(socket);
  }
}
