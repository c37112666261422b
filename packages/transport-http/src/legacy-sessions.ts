import { randomUUID } from 'node:crypto';
import type { HttpChannel } from './http-channel.js';
import type { ServedConnection } from './ports/mcp-endpoint.js';

/** One legacy (2025-11-25) session: its channel, its connection, and who opened it. */
export interface LegacySession {
  readonly id: string;
  readonly channel: HttpChannel;
  readonly connection: ServedConnection;
  /** The principal's id that opened it ('' when unauthenticated); only it may use the session. */
  readonly owner: string;
  lastActive: number;
}

/**
 * The open legacy sessions, by `Mcp-Session-Id` (a random UUID: unguessable).
 *
 * Contract: at most `maxSessions` at once; a session with no request for
 * `idleMs` and no open stream is closed by `sweep` (called on a timer by the
 * server); `close` ends a session's connection (its subscriptions), then
 * its channel. A session is found only by its owner: another principal's
 * session id looks unknown.
 */
export class LegacySessions {
  private readonly sessions = new Map<string, LegacySession>();

  constructor(
    private readonly maxSessions: number,
    private readonly idleMs: number,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  full(): boolean {
    return this.sessions.size >= this.maxSessions;
  }

  open(channel: HttpChannel, connection: ServedConnection, owner: string): LegacySession {
    const session: LegacySession = { id: randomUUID(), channel, connection, owner, lastActive: Date.now() };
    this.sessions.set(session.id, session);
    return session;
  }

  find(id: string, owner: string): LegacySession | undefined {
    const session = this.sessions.get(id);
    if (session === undefined || session.owner !== owner) return undefined;
    session.lastActive = Date.now();
    return session;
  }

  async close(session: LegacySession): Promise<void> {
    if (!this.sessions.delete(session.id)) return;
    await session.connection.shutdown().catch(() => undefined);
    await session.channel.close();
  }

  async sweep(now = Date.now()): Promise<void> {
    for (const session of [...this.sessions.values()]) {
      if (now - session.lastActive >= this.idleMs && session.channel.openStreams() === 0)
        await this.close(session);
    }
  }

  all(): LegacySession[] {
    return [...this.sessions.values()];
  }
}
