import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { readBody } from './body-reader.js';
import { HttpChannel } from './http-channel.js';
import {
  type HttpTransportOptions,
  isLoopback,
  type ResolvedHttpOptions,
  resolveHttpOptions,
} from './http-transport-options.js';
import { errorBody, type InboundShape, shapeOf } from './jsonrpc-shape.js';
import { LegacySessions } from './legacy-sessions.js';
import type { HttpGetRoute, HttpRouteResponse } from './ports/http-routes.js';
import type { ConnectionContext, McpEndpoint, ServedConnection } from './ports/mcp-endpoint.js';
import type { Principal, RequestAuthorizer } from './ports/request-authorizer.js';
import { refuseForeignRequest } from './request-gate.js';
import { decideEra, statusOfModernAnswer } from './request-headers.js';
import { ResponseStream } from './response-stream.js';

/** What the transport logs (pino's call shape). */
export interface TransportLogger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

export interface StreamableHttpDependencies {
  /** Absent: no authorization, and the server refuses to listen beyond loopback. */
  readonly authorizer?: RequestAuthorizer;
  readonly routes?: readonly HttpGetRoute[];
  readonly logger?: TransportLogger;
}

/** Where the server listens, once it does. */
export interface ListeningAddress {
  readonly host: string;
  readonly port: number;
  /** The MCP endpoint's URL. */
  readonly url: string;
}

const SESSION_HEADER = 'mcp-session-id';
const SETTLE_MS = 2000;
const silent: TransportLogger = { info: () => undefined, warn: () => undefined };
type Exchange = Exclude<InboundShape, { kind: 'invalid' }>;

/**
 * MCP's Streamable HTTP transport on `node:http` (or `node:https` with a
 * key and certificate), one endpoint for both eras, chosen per request as
 * on stdio:
 *
 * - MCP 2026-07-28 (stateless): each POSTed request is its own connection
 *   to the endpoint; its answer is JSON, or an SSE stream when anything
 *   (progress) comes before it; closing the stream cancels the request.
 * - 2025-11-25 (legacy): `initialize` opens a session (`Mcp-Session-Id`);
 *   its requests, notifications and responses are POSTed with the id; a GET
 *   opens its standalone SSE stream; DELETE ends it.
 *
 * Every request passes, in order: the `Host`/`Origin` allowlists (403), the
 * authorizer if any (its 401/403 and `WWW-Authenticate`), then the method's
 * checks (Accept 406, Content-Type 415, body size 413, JSON 400, the
 * stateless era's headers 400/-32020). The connection scope is the
 * authorized principal's id. node:http enforces the header, request and
 * keep-alive timeouts and the header size; a response the client stops
 * reading is destroyed after the stall timeout.
 *
 * `listen` refuses (rejects) to bind beyond loopback without an authorizer.
 */
export class StreamableHttpServer {
  readonly options: ResolvedHttpOptions;
  private readonly server: Server;
  private readonly sessions: LegacySessions;
  private readonly inFlight = new Set<ServedConnection>();
  private readonly sockets = new Set<Socket>();
  private sweepTimer: NodeJS.Timeout | undefined;
  private closing: Promise<void> | null = null;
  private readonly logger: TransportLogger;

  constructor(
    private readonly endpoint: McpEndpoint,
    options: HttpTransportOptions,
    private readonly dependencies: StreamableHttpDependencies = {},
  ) {
    this.options = resolveHttpOptions(options);
    this.logger = dependencies.logger ?? silent;
    this.sessions = new LegacySessions(this.options.maxSessions, this.options.sessionIdleMs);
    const serverOptions = {
      headersTimeout: this.options.headersTimeoutMs,
      requestTimeout: this.options.requestTimeoutMs,
      keepAliveTimeout: this.options.keepAliveTimeoutMs,
      maxHeaderSize: this.options.maxHeaderBytes,
      // How often node:http checks the header and request timeouts (its default, 30 s, would let them overrun).
      connectionsCheckingInterval: Math.max(100, Math.min(1000, this.options.headersTimeoutMs / 2)),
    };
    const handler = (request: IncomingMessage, response: ServerResponse) => {
      this.handle(request, response).catch((error: unknown) => {
        this.logger.warn({ err: error }, 'http request failed');
        if (!response.headersSent) respondJson(response, 500, errorBody(null, -32603, 'internal error'));
        else response.destroy();
      });
    };
    this.server = this.options.tls
      ? createHttpsServer(
          { ...serverOptions, key: this.options.tls.key, cert: this.options.tls.cert },
          handler,
        )
      : createHttpServer(serverOptions, handler);
    this.server.maxConnections = this.options.maxConnections;
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  /** Binds and listens. Rejects on a bind error, and beyond loopback without an authorizer. */
  async listen(): Promise<ListeningAddress> {
    const { host, port, path, tls } = this.options;
    if (this.dependencies.authorizer === undefined && !isLoopback(host)) {
      throw new Error(
        `refusing to serve MCP over HTTP on ${host} without authorization: bind a loopback address (127.0.0.1) or configure an authorizer`,
      );
    }
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.sweepTimer = setInterval(
      () => void this.sessions.sweep(),
      Math.min(60_000, this.options.sessionIdleMs),
    );
    this.sweepTimer.unref();
    const address = this.server.address() as AddressInfo;
    const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    const url = `${tls ? 'https' : 'http'}://${shown}:${address.port}${path}`;
    this.logger.info({ url }, 'serving MCP over Streamable HTTP');
    return { host: address.address, port: address.port, url };
  }

  /** Legacy sessions open now. */
  sessionCount(): number {
    return this.sessions.size;
  }

  /**
   * Stops accepting, ends open subscriptions, waits (up to 2 s) for
   * started requests to answer, closes the sessions and every socket. Idempotent.
   */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    const stopped = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    const connections = [...this.inFlight, ...this.sessions.all().map((session) => session.connection)];
    await Promise.all(connections.map((connection) => connection.shutdown().catch(() => undefined)));
    await Promise.all(connections.map((connection) => connection.settle(SETTLE_MS).catch(() => undefined)));
    await Promise.all(this.sessions.all().map((session) => this.sessions.close(session)));
    for (const socket of this.sockets) socket.destroy();
    await stopped;
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    const foreign = refuseForeignRequest(request, this.options.allowedHosts, this.options.allowedOrigins);
    if (foreign !== null) {
      this.logger.warn({ host: request.headers.host, origin: request.headers.origin }, `refused: ${foreign}`);
      respondJson(response, 403, errorBody(null, -32600, `Forbidden: ${foreign}`));
      return;
    }
    if (path !== this.options.path) {
      await this.serveRoute(request, response, path);
      return;
    }
    let principal: Principal | undefined;
    if (this.dependencies.authorizer !== undefined) {
      const verdict = await this.dependencies.authorizer.authorize(request.headers);
      if (!verdict.ok) {
        response.setHeader('www-authenticate', verdict.wwwAuthenticate);
        respondJson(response, verdict.status, { error: verdict.error });
        request.resume();
        return;
      }
      principal = verdict.principal;
    }
    const context: ConnectionContext = principal ? { scope: principal.id, principal } : {};
    switch (request.method) {
      case 'POST':
        await this.post(request, response, context);
        return;
      case 'GET':
        this.openEventStream(request, response, context);
        return;
      case 'DELETE':
        await this.deleteSession(request, response, context);
        return;
      default:
        response.setHeader('allow', 'GET, POST, DELETE');
        respondJson(response, 405, errorBody(null, -32600, `Method ${request.method} not allowed`));
    }
  }

  private async serveRoute(request: IncomingMessage, response: ServerResponse, path: string): Promise<void> {
    const route =
      request.method === 'GET'
        ? this.dependencies.routes?.find((r) => (r.prefix ? path.startsWith(r.path) : path === r.path))
        : undefined;
    if (route === undefined) {
      respondJson(response, 404, { error: 'not found' });
      return;
    }
    const answer: HttpRouteResponse = await Promise.resolve()
      .then(() => route.respond({ path, headers: request.headers }))
      .catch((error: unknown) => {
        this.logger.warn({ err: error, path }, 'http route failed');
        return { status: 500, body: JSON.stringify({ error: 'internal error' }) };
      });
    response.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
    response.end(answer.body);
  }

  private async post(
    request: IncomingMessage,
    response: ServerResponse,
    context: ConnectionContext,
  ): Promise<void> {
    const accept = request.headers.accept ?? '';
    const acceptsAll = accept.includes('*/*');
    if (!acceptsAll && !(accept.includes('application/json') && accept.includes('text/event-stream'))) {
      request.resume();
      respondJson(
        response,
        406,
        errorBody(null, -32600, 'Not Acceptable: accept both application/json and text/event-stream'),
      );
      return;
    }
    if (!(request.headers['content-type'] ?? '').includes('application/json')) {
      request.resume();
      respondJson(
        response,
        415,
        errorBody(null, -32600, 'Unsupported Media Type: the body must be application/json'),
      );
      return;
    }
    const body = await readBody(request, this.options.maxBodyBytes);
    if (!body.ok) {
      if (body.status === 413) response.setHeader('connection', 'close');
      respondJson(response, body.status, errorBody(null, -32600, body.message));
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.text);
    } catch (error) {
      respondJson(response, 400, errorBody(null, -32700, `Parse error: ${(error as Error).message}`));
      return;
    }
    const shape = shapeOf(parsed);
    if (shape.kind === 'invalid') {
      respondJson(response, 400, errorBody(null, -32600, `Invalid Request: ${shape.reason}`));
      return;
    }
    const era = decideEra(shape, request.headers, this.options.modernVersions);
    if (era.era === 'refused') {
      respondJson(
        response,
        400,
        errorBody(shape.kind === 'request' ? shape.id : null, era.code, era.message),
      );
      return;
    }
    if (era.era === 'modern') this.serveModern(parsed, shape, response, context);
    else await this.serveLegacy(request, parsed, shape, response, context);
  }

  /** One stateless request: its own channel and connection, ended with its response. */
  private serveModern(
    message: unknown,
    shape: Exchange,
    response: ServerResponse,
    context: ConnectionContext,
  ): void {
    if (shape.kind !== 'request') {
      // Nothing to route a stateless notification or response to: cancellation is closing the stream.
      response.writeHead(202).end();
      return;
    }
    const channel = new HttpChannel(statusOfModernAnswer);
    let connection: ServedConnection | undefined;
    const stream = this.streamFor(response, channel, () => {
      if (connection) this.inFlight.delete(connection);
      void channel.close();
    });
    connection = this.endpoint.connect(channel, context);
    this.inFlight.add(connection);
    const served = connection;
    response.on('close', () => {
      this.inFlight.delete(served);
      void channel.close();
    });
    channel.deliver(message, { id: shape.id, progressToken: progressTokenOf(shape), on: stream });
  }

  private async serveLegacy(
    request: IncomingMessage,
    message: unknown,
    shape: Exchange,
    response: ServerResponse,
    context: ConnectionContext,
  ): Promise<void> {
    const owner = context.scope ?? '';
    const sessionId = headerValue(request, SESSION_HEADER);
    if (shape.kind === 'request' && shape.method === 'initialize') {
      if (sessionId !== undefined) {
        respondJson(
          response,
          400,
          errorBody(
            shape.id,
            -32600,
            'Bad Request: initialize opens a session; send it without Mcp-Session-Id',
          ),
        );
        return;
      }
      if (this.sessions.full()) {
        respondJson(response, 503, errorBody(shape.id, -32603, 'too many open sessions; try again later'));
        return;
      }
      const channel = new HttpChannel();
      const connection = this.endpoint.connect(channel, context);
      const session = this.sessions.open(channel, connection, owner);
      const stream = this.streamFor(response, channel, undefined, { [SESSION_HEADER]: session.id });
      channel.deliver(message, { id: shape.id, progressToken: undefined, on: stream });
      return;
    }
    if (sessionId === undefined) {
      respondJson(
        response,
        400,
        errorBody(
          shape.kind === 'request' ? shape.id : null,
          -32600,
          'Bad Request: Mcp-Session-Id header is required',
        ),
      );
      return;
    }
    const session = this.sessions.find(sessionId, owner);
    if (session === undefined) {
      respondJson(
        response,
        404,
        errorBody(shape.kind === 'request' ? shape.id : null, -32001, 'Session not found'),
      );
      return;
    }
    if (shape.kind !== 'request') {
      const taken = session.channel.deliver(message);
      if (taken) response.writeHead(202).end();
      else respondJson(response, 429, errorBody(null, -32603, 'too many messages waiting on this session'));
      return;
    }
    if (session.channel.isPending(shape.id)) {
      respondJson(
        response,
        400,
        errorBody(shape.id, -32600, `Invalid Request: id ${JSON.stringify(shape.id)} is already in flight`),
      );
      return;
    }
    const stream = this.streamFor(response, session.channel);
    if (
      !session.channel.deliver(message, { id: shape.id, progressToken: progressTokenOf(shape), on: stream })
    ) {
      session.channel.abandon(stream);
      stream.finish(errorBody(shape.id, -32603, 'too many messages waiting on this session'), 429);
    }
  }

  private openEventStream(
    request: IncomingMessage,
    response: ServerResponse,
    context: ConnectionContext,
  ): void {
    const sessionId = headerValue(request, SESSION_HEADER);
    if (sessionId === undefined) {
      response.setHeader('allow', 'POST, DELETE');
      respondJson(
        response,
        405,
        errorBody(null, -32600, 'Method Not Allowed: a GET stream needs a legacy session'),
      );
      return;
    }
    if (!(request.headers.accept ?? '').includes('text/event-stream')) {
      respondJson(response, 406, errorBody(null, -32600, 'Not Acceptable: accept text/event-stream'));
      return;
    }
    const session = this.sessions.find(sessionId, context.scope ?? '');
    if (session === undefined) {
      respondJson(response, 404, errorBody(null, -32001, 'Session not found'));
      return;
    }
    const stream = this.streamFor(response, session.channel);
    if (!session.channel.attachEventStream(stream)) {
      stream.finish(errorBody(null, -32600, 'Conflict: this session already has a GET stream'), 409);
      return;
    }
    stream.openEventStream();
  }

  private async deleteSession(
    request: IncomingMessage,
    response: ServerResponse,
    context: ConnectionContext,
  ): Promise<void> {
    const sessionId = headerValue(request, SESSION_HEADER);
    if (sessionId === undefined) {
      respondJson(response, 400, errorBody(null, -32600, 'Bad Request: Mcp-Session-Id header is required'));
      return;
    }
    const session = this.sessions.find(sessionId, context.scope ?? '');
    if (session === undefined) {
      respondJson(response, 404, errorBody(null, -32001, 'Session not found'));
      return;
    }
    await this.sessions.close(session);
    response.writeHead(200).end();
  }

  private streamFor(
    response: ServerResponse,
    channel: HttpChannel,
    onGone?: () => void,
    headers?: Record<string, string>,
  ): ResponseStream {
    return new ResponseStream(response, {
      stallTimeoutMs: this.options.stallTimeoutMs,
      ...(headers && { headers }),
      onGone: (stream) => {
        channel.abandon(stream);
        onGone?.();
      },
      ondrain: () => channel.ondrain?.(),
    });
  }
}

function progressTokenOf(shape: Exchange): unknown {
  if (shape.kind !== 'request') return undefined;
  const meta = shape.params?._meta;
  return typeof meta === 'object' && meta !== null
    ? (meta as Record<string, unknown>).progressToken
    : undefined;
}

function headerValue(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return (Array.isArray(value) ? value[0] : value)?.trim() || undefined;
}

function respondJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}
