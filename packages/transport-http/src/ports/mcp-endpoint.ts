import type { Principal } from './request-authorizer.js';

/**
 * The channel the transport hands to the protocol core for one connection:
 * structurally `@termgate/core`'s `MessageChannel` (this package imports
 * nothing of ours; `packages/cli/test/transport/http-channel-fit.test.ts`
 * checks the fit). Whole JSON values in and out.
 */
export interface HttpMessageChannel {
  onmessage?: (message: unknown) => void;
  onclose?: () => void;
  start(): void;
  send(message: unknown): Promise<void>;
  close(): Promise<void>;
  pause?(): void;
  resume?(): void;
  backlogBytes?(): number;
  ondrain?: () => void;
}

/**
 * Who the connection serves. `scope` is the principal's id when the request
 * was authorized (terminals are isolated by it), absent on an
 * unauthenticated loopback server (the default scope, as on stdio).
 */
export interface ConnectionContext {
  readonly scope?: string;
  readonly principal?: Principal;
}

/** A served connection, as the transport ends it. */
export interface ServedConnection {
  /** Ends open subscriptions with a complete result. Idempotent. */
  shutdown(): Promise<void>;
  /** Resolves once every started request answered, or after `timeoutMs`. */
  settle(timeoutMs: number): Promise<void>;
}

/**
 * The protocol the transport serves (the cli adapts `McpServer.connect`).
 *
 * Contract: `connect` starts serving the channel at once; it is called
 * once per modern (2026-07-28) request, each its own connection, and once
 * per legacy (2025-11-25) session, at its `initialize`.
 */
export interface McpEndpoint {
  connect(channel: HttpMessageChannel, context: ConnectionContext): ServedConnection;
}
