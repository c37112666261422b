import type { Readable, Writable } from 'node:stream';
import { McpServer } from '@termgate/core';
import { TERMINAL_HOST, type TerminalHost } from '@termgate/termhost';
import type { StreamableHttpServer } from '@termgate/transport-http';
import type { StdioTransport } from '@termgate/transport-stdio';
import { inject, injectable } from 'inversify';
import type { Logger } from 'pino';
import type { PolicyRuntime } from '../composition/policy-runtime.js';
import type { PolicyStartup } from '../composition/policy-startup.js';
import {
  NOTICES,
  OPEN_HTTP_TRANSPORT,
  OPEN_STDIO_TRANSPORT,
  type OpenHttpTransport,
  type OpenStdioTransport,
  POLICY_STARTUP,
  ROOT_LOGGER,
  SHUTDOWN_HOOKS,
  type ShutdownHook,
} from '../composition/tokens.js';
import type { Notices } from '../logging.js';

/** How long shutdown waits for started requests to answer after the terminals ended. */
const SETTLE_MS = 2000;

/**
 * One `serve` run: MCP over the given streams until the input ends or
 * `stop` is called.
 *
 * Shutdown contract (stdin EOF, a client that reads nothing for the stall
 * timeout, SIGTERM, SIGINT): open subscriptions are
 * closed with a complete result, every terminal's process group is killed
 * and waited for, requests still running answer (for up to 2 s), the
 * shutdown hooks run (the audit trail's stop record),
 * queued messages are flushed, then `run` resolves. It is
 * safe to call `stop` more than once.
 */
@injectable()
export class ServeApplication {
  private stopping: Promise<void> | null = null;
  private resolveRun: (() => void) | null = null;
  private transport: StdioTransport | null = null;
  private connection: ReturnType<McpServer['connect']> | null = null;
  private http: StreamableHttpServer | null = null;

  constructor(
    @inject(McpServer) private readonly server: McpServer,
    @inject(TERMINAL_HOST) private readonly host: TerminalHost,
    @inject(ROOT_LOGGER) private readonly logger: Logger,
    @inject(SHUTDOWN_HOOKS) private readonly shutdownHooks: readonly ShutdownHook[],
    @inject(OPEN_STDIO_TRANSPORT) private readonly openTransport: OpenStdioTransport,
    @inject(POLICY_STARTUP) private readonly policy: PolicyStartup,
    @inject(OPEN_HTTP_TRANSPORT) private readonly openHttp: OpenHttpTransport,
    @inject(NOTICES) private readonly notices: Notices,
  ) {}

  /**
   * The policy side, starting while the protocol already answers (the
   * server's construction started it): resolves once the gate stands, and
   * rejects when it could not start, in which case every verb fails.
   */
  policyRuntime(): Promise<PolicyRuntime> {
    return this.policy.runtime();
  }

  /**
   * `stallTimeoutMs`: how long the client may leave our output unread before
   * it counts as gone and the server shuts down as on EOF (default: the
   * transport's, 30 s).
   */
  run(
    input: Readable,
    output: Writable,
    options: { endOutputOnClose: boolean; stallTimeoutMs?: number },
  ): Promise<void> {
    if (this.stopping) return this.stopping;
    const finished = new Promise<void>((resolve) => {
      this.resolveRun = resolve;
    });
    this.transport = this.openTransport(input, output, {
      endOutputOnClose: options.endOutputOnClose,
      ...(options.stallTimeoutMs !== undefined && { stallTimeoutMs: options.stallTimeoutMs }),
    });
    this.transport.onclose = () => {
      void this.stop('input closed');
    };
    this.connection = this.server.connect(this.transport);
    this.logger.info('serving MCP on stdio');
    return finished;
  }

  /**
   * MCP over Streamable HTTP (`serve --http`) until `stop`: resolves true
   * once stopped; rejects when it cannot listen (a bind error, or beyond
   * loopback without authorization), before anything was served. The
   * endpoint's URL is printed on stderr whatever the log level.
   */
  async runHttp(): Promise<true> {
    if (this.stopping) {
      await this.stopping;
      return true;
    }
    const finished = new Promise<void>((resolve) => {
      this.resolveRun = resolve;
    });
    this.http = this.openHttp(this.server);
    const { url } = await this.http.listen();
    this.notices.anchor(`serving MCP over Streamable HTTP at ${url}`, { url });
    await finished;
    return true;
  }

  stop(reason: string): Promise<void> {
    this.stopping ??= this.shutdown(reason);
    return this.stopping;
  }

  private async shutdown(reason: string): Promise<void> {
    this.logger.info({ reason }, 'shutting down');
    // Stops accepting, ends subscriptions and lets started requests answer while the terminals end.
    const httpClosed = this.http?.close();
    await this.connection?.shutdown();
    await this.host.closeAll();
    // A request the terminals were part of (a create waiting for its command) answers with what happened.
    await this.connection?.settle(SETTLE_MS);
    for (const hook of this.shutdownHooks) {
      try {
        await hook(reason);
      } catch (error) {
        this.logger.error({ err: error }, 'shutdown step failed');
      }
    }
    await this.transport?.close();
    await httpClosed;
    this.logger.info('stopped');
    this.resolveRun?.();
  }
}
