import type { TerminalHost } from '@termgate/termhost';
import { classify } from '../jsonrpc/messages.js';
import { OutgoingRequests } from '../jsonrpc/outgoing-requests.js';
import { ProtocolError } from '../jsonrpc/protocol-error.js';
import { idKey, isAnyId, type RequestId } from '../jsonrpc/request-id.js';
import { framingErrorAnswer } from '../jsonrpc/serve-channel.js';
import { type Logger, silentLogger } from '../ports/logger.js';
import type { ChannelFramingError, MessageChannel } from '../ports/message-channel.js';
import type { SchemaValidator } from '../ports/schema-validator.js';
import {
  ACP_CANCEL_REQUEST,
  ACP_REQUEST_PERMISSION,
  ACP_SESSION_CANCEL,
  ACP_SESSION_PROMPT,
  ACP_SESSION_UPDATE,
} from './acp-methods.js';
import {
  acpPermissionApprover,
  DEFAULT_ACP_APPROVAL_TIMEOUT_MS,
  isTermgateId,
  TERMGATE_ID_PREFIX,
} from './acp-permission-approver.js';
import { AcpTerminalDispatcher } from './acp-terminal-dispatcher.js';
import { AcpTerminalService } from './acp-terminal-service.js';
import { RelayFlow } from './relay-flow.js';
import { EditorSessions, OpenExecuteCalls } from './session-tracking.js';
import { ToolCallTerminalRelay, type ToolCallTerminalRelayOptions } from './tool-call-terminal-relay.js';

type Json = Record<string, unknown>;

export interface AcpProxyOptions extends ToolCallTerminalRelayOptions {
  readonly logger?: Logger;
  /** Unflushed writes to one side past which the other side is paused. Default {@link MAX_QUEUED_MESSAGES}. */
  readonly maxQueuedMessages?: number;
  /** Unflushed bytes to one side past which the other side is paused. Default {@link MAX_QUEUED_BYTES}. */
  readonly maxQueuedBytes?: number;
  /**
   * How long a side may leave paused writes unread (no write to it settles)
   * before it counts as gone and the conversation ends. Default {@link STALL_TIMEOUT_MS}.
   */
  readonly stallTimeoutMs?: number;
  /**
   * How long the editor's person may take to answer an approval question
   * (a policy `ask`); no answer by then is a denial. Default 120 s.
   */
  readonly approvalTimeoutMs?: number;
}

/** Which side ended the conversation. */
export type AcpProxySide = 'editor' | 'agent';

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `initialize` params with `clientCapabilities.terminal: true`; everything else as the editor sent it. */
export function withTerminalCapability(params: unknown): Json {
  const base = isObject(params) ? params : {};
  const capabilities = isObject(base.clientCapabilities) ? base.clientCapabilities : {};
  return { ...base, clientCapabilities: { ...capabilities, terminal: true } };
}

/**
 * An ACP proxy between an editor and an agent that serves the agent's
 * terminals itself, through a TerminalHost (and so through its gate).
 */
export class AcpProxy {
  constructor(
    private readonly host: TerminalHost,
    private readonly validator: SchemaValidator,
    private readonly options: AcpProxyOptions = {},
  ) {}

  /** Starts relaying between the two channels. */
  connect(editor: MessageChannel, agent: MessageChannel): AcpProxyConnection {
    return new AcpProxyConnection(editor, agent, this.host, this.validator, this.options);
  }
}

/**
 * One editor ↔ agent conversation.
 *
 * Contract:
 * - Every message is forwarded as received (same JSON value), in arrival
 *   order per direction, except:
 *   - the editor's `initialize` request reaches the agent with
 *     `params.clientCapabilities.terminal: true`;
 *   - the agent's `terminal/*` requests are answered here (never forwarded),
 *     and its `$/cancel_request` for one of them is consumed here;
 *   - terminal items in the agent's tool calls are rewritten for the editor
 *     (see {@link ToolCallTerminalRelay}), which also receives the relay's own
 *     `tool_call_update`s.
 * - Lines that are not JSON are answered with -32700 to the side that sent
 *   them and are not forwarded.
 * - A command the policy puts on `ask` is asked about by termgate itself:
 *   a `session/request_permission` to the editor showing the exact line
 *   that was judged (see `acpPermissionApprover`), about a tool call
 *   termgate announces under an id of its own (`termgate-…`). The agent's
 *   open `execute` tool call in that session (announced, not yet finished,
 *   no terminal yet), if any, is named in the question's text only.
 * - Ids beginning `termgate-` are termgate's: the agent's `session/update`s
 *   and `session/request_permission`s naming such a tool call id are
 *   dropped (the request is refused), and so are its requests using such a
 *   JSON-RPC id (refused with -32600); so nothing the agent sends can change
 *   what the editor shows for termgate's question. Every editor response
 *   with such an id is consumed here, never forwarded: pending, settled,
 *   timed out or never sent.
 * - The editor's `session/cancel` (forwarded as usual) withdraws that
 *   session's open questions: a denial. `allow_always` is offered only in a
 *   session the editor created through this proxy (`session/new`, `load`,
 *   `fork`, `resume` answered with success), and covers this exact line, in
 *   this cwd, for the rest of that session.
 * - `closed` resolves with the side whose channel closed first. The owner
 *   then calls `shutdown`, which kills and releases every terminal the
 *   agent's sessions own. Closing the channels and the agent process is the
 *   owner's business.
 */
export class AcpProxyConnection {
  readonly service: AcpTerminalService;
  readonly closed: Promise<AcpProxySide>;
  private readonly dispatcher: AcpTerminalDispatcher;
  private readonly relay: ToolCallTerminalRelay;
  private readonly logger: Logger;
  private readonly initializeIds = new Set<string>();
  /** The editor's `session/prompt` requests in flight: id key → sessionId. */
  private readonly promptSessions = new Map<string, string>();
  private shuttingDown: Promise<void> | null = null;
  /** Our requests to the editor (approval questions). */
  private readonly toEditorRequests: OutgoingRequests;
  /** Per session: aborted by the editor's `session/cancel`, then replaced. */
  private readonly turnSignals = new Map<string, AbortController>();
  /** Per session: the agent's latest open `execute` tool call without a terminal. */
  private readonly openExecute = new OpenExecuteCalls();
  /** Sessions the editor created (or loaded) through this proxy: where `allow_always` is offered. */
  private readonly editorSessions = new EditorSessions();
  private editorName: string | undefined;
  /** Forwarding with back-pressure: pauses a side while the other's writes back up, or while terminal requests wait. */
  private readonly flow: RelayFlow;

  constructor(
    editor: MessageChannel,
    private readonly agent: MessageChannel,
    host: TerminalHost,
    validator: SchemaValidator,
    options: AcpProxyOptions,
  ) {
    this.logger = options.logger ?? silentLogger;
    this.toEditorRequests = new OutgoingRequests(
      async (message) => this.toEditor(message),
      (requestId) => ({ jsonrpc: '2.0', method: ACP_CANCEL_REQUEST, params: { requestId } }),
    );
    const timeoutMs = options.approvalTimeoutMs ?? DEFAULT_ACP_APPROVAL_TIMEOUT_MS;
    this.service = new AcpTerminalService(host, validator, {
      approverFor: (sessionId) =>
        acpPermissionApprover({
          requests: this.toEditorRequests,
          notify: (message) => this.toEditor(message),
          sessionId,
          agentToolCallId: () => this.openExecute.take(sessionId),
          allowAlways: () => this.editorSessions.has(sessionId),
          signal: () => this.turnSignal(sessionId).signal,
          timeoutMs,
          editorName: () => this.editorName,
        }),
    });
    let endedBy: (side: AcpProxySide) => void = () => undefined;
    this.closed = new Promise<AcpProxySide>((resolve) => {
      endedBy = resolve;
      editor.onclose = () => resolve('editor');
      agent.onclose = () => resolve('agent');
    });
    const maxQueuedBytes = options.maxQueuedBytes ?? MAX_QUEUED_BYTES;
    this.flow = new RelayFlow(
      { editor, agent },
      {
        maxQueuedMessages: options.maxQueuedMessages ?? MAX_QUEUED_MESSAGES,
        maxQueuedBytes,
        stallTimeoutMs: options.stallTimeoutMs ?? STALL_TIMEOUT_MS,
        onStall: (side) => endedBy(side),
        logger: this.logger,
      },
    );
    this.dispatcher = new AcpTerminalDispatcher(this.service, (m) => this.agent.send(m), this.logger, {
      backlogBytes: () => agent.backlogBytes?.() ?? 0,
      hold: (held) => this.flow.hold('agent', 'terminals', held),
      maxBacklogBytes: maxQueuedBytes,
    });
    agent.ondrain = () => this.dispatcher.pump();
    this.relay = new ToolCallTerminalRelay(
      host,
      (sessionId) => this.service.callerFor(sessionId),
      (params) => this.toEditor({ jsonrpc: '2.0', method: ACP_SESSION_UPDATE, params }),
      options,
    );
    editor.onmessage = (message) => this.fromEditor(message);
    editor.onframingerror = (error) => this.framingError('editor', error);
    agent.onmessage = (message) => this.fromAgent(message);
    agent.onframingerror = (error) => this.framingError('agent', error);
    editor.start();
    agent.start();
  }

  /** Stops the display relay, then kills and releases every terminal of the agent's sessions. Idempotent. */
  shutdown(): Promise<void> {
    this.shuttingDown ??= (async () => {
      this.flow.dispose();
      this.relay.dispose();
      this.toEditorRequests.closeAll();
      await this.service.closeAll();
    })();
    return this.shuttingDown;
  }

  private fromEditor(raw: unknown): void {
    let message = raw;
    // The editor's answer to one of termgate's own questions: consumed here,
    // never forwarded, whether pending, settled, timed out or never sent.
    if (isObject(raw) && !('method' in raw) && isTermgateId(raw.id)) {
      if (!this.toEditorRequests.settle(raw)) {
        this.logger.debug({ id: raw.id }, "dropped the editor's answer to a question no longer pending");
      }
      return;
    }
    this.editorSessions.noteRequest(raw);
    if (isObject(raw) && raw.method === ACP_SESSION_CANCEL && isObject(raw.params)) {
      const sessionId = raw.params.sessionId;
      if (typeof sessionId === 'string') {
        this.turnSignals.get(sessionId)?.abort(new Error('the prompt turn was cancelled'));
        this.turnSignals.delete(sessionId);
      }
    }
    if (
      isObject(raw) &&
      raw.method === ACP_SESSION_PROMPT &&
      isAnyId(raw.id) &&
      isObject(raw.params) &&
      typeof raw.params.sessionId === 'string'
    ) {
      this.promptSessions.set(idKey(raw.id), raw.params.sessionId);
    }
    if (isObject(raw) && raw.method === 'initialize' && 'id' in raw) {
      const info = isObject(raw.params) && isObject(raw.params.clientInfo) ? raw.params.clientInfo : {};
      if (typeof info.name === 'string') this.editorName = info.name;
      message = { ...raw, params: withTerminalCapability(raw.params) };
      if (isAnyId(raw.id)) this.initializeIds.add(idKey(raw.id));
    }
    this.flow.forward('agent', message);
  }

  private fromAgent(raw: unknown): void {
    if (Array.isArray(raw)) {
      // No batches in ACP; a batch could smuggle terminal/* requests past the dispatcher.
      this.flow.forward('agent', invalidFromAgent(null, 'JSON-RPC batches are not supported'));
      return;
    }
    const message = classify(raw);
    if (message.kind === 'request' && isTermgateId(message.id)) {
      // Its answer would be taken for one to termgate's own request (see fromEditor).
      this.flow.forward(
        'agent',
        invalidFromAgent(
          message.id,
          `request ids beginning "${TERMGATE_ID_PREFIX}" are reserved for termgate`,
        ),
      );
      return;
    }
    if (message.kind === 'request' && this.dispatcher.takeRequest(message)) return;
    if (isObject(raw) && typeof raw.method === 'string' && raw.method.startsWith('terminal/')) {
      // A terminal/* message the dispatcher did not take (no jsonrpc, a null or
      // fractional id, non-object params, a notification, a method it does not
      // serve) is answered here: it must never reach the editor, which would
      // run it ungated and unaudited.
      if (message.kind === 'request') {
        this.flow.forward('agent', {
          jsonrpc: '2.0',
          id: message.id,
          error: ProtocolError.methodNotFound(raw.method).toWire(),
        });
      } else if ('id' in raw) {
        const id = isAnyId(raw.id) ? raw.id : null;
        this.flow.forward(
          'agent',
          invalidFromAgent(id, `${raw.method} must be a JSON-RPC 2.0 request with a string or integer id`),
        );
      } else {
        this.logger.warn({ method: raw.method }, 'dropped a terminal/* notification from the agent');
      }
      return;
    }
    if (message.kind === 'notification') {
      if (this.dispatcher.takeNotification(message)) return;
      if (message.method === ACP_SESSION_UPDATE && isObject(raw)) {
        if (isTermgateId(toolCallIdOf(raw.params, 'update'))) {
          this.logger.warn({}, "dropped the agent's session/update naming a tool call of termgate's");
          return;
        }
        this.openExecute.note(raw.params);
        const params = this.relay.rewrite(raw.params);
        this.toEditor(params === raw.params ? raw : { ...raw, params });
        return;
      }
    }
    if (message.kind === 'request' && message.method === ACP_REQUEST_PERMISSION && isObject(raw)) {
      if (isTermgateId(toolCallIdOf(raw.params, 'toolCall'))) {
        this.flow.forward(
          'agent',
          invalidFromAgent(message.id, `tool call ids beginning "${TERMGATE_ID_PREFIX}" are termgate's`),
        );
        return;
      }
      const params = this.relay.rewritePermission(raw.params);
      this.toEditor(params === raw.params ? raw : { ...raw, params });
      return;
    }
    if (isObject(raw) && ('result' in raw || 'error' in raw) && isAnyId(raw.id)) {
      if ('result' in raw) this.noteAgentInfo(raw.id, raw.result);
      this.editorSessions.noteResponse(raw.id, 'result' in raw ? raw.result : undefined);
      const sessionId = this.promptSessions.get(idKey(raw.id));
      if (sessionId !== undefined) {
        // The turn ends: bring its tool calls up to date first.
        this.promptSessions.delete(idKey(raw.id));
        this.relay.flushSession(sessionId);
      }
    }
    this.toEditor(raw);
  }

  /** The signal of a session's current prompt turn (aborted by `session/cancel`). */
  private turnSignal(sessionId: string): AbortController {
    let controller = this.turnSignals.get(sessionId);
    if (controller === undefined) {
      controller = new AbortController();
      this.turnSignals.set(sessionId, controller);
    }
    return controller;
  }

  /** Records the agent's name from its `initialize` answer, for the caller context (the audit trail). */
  private noteAgentInfo(id: RequestId, result: unknown): void {
    if (!this.initializeIds.delete(idKey(id)) || !isObject(result) || !isObject(result.agentInfo)) return;
    const { name, version } = result.agentInfo;
    if (typeof name === 'string') {
      this.service.setClient(name, typeof version === 'string' ? version : undefined);
    }
  }

  /**
   * Forwards in order, with back-pressure (see {@link RelayFlow}): while one
   * side's writes back up, the other side is paused, so a flood is held
   * back by the pipes instead of growing this process's memory; a side that
   * leaves them unread for `stallTimeoutMs` counts as gone (`closed`).
   */
  private toEditor(message: unknown): void {
    this.flow.forward('editor', message);
  }

  private framingError(from: AcpProxySide, error: ChannelFramingError): void {
    this.logger.warn({ error }, 'dropped a line that is not a JSON-RPC message');
    this.flow.forward(from, { jsonrpc: '2.0', id: null, error: framingErrorAnswer(error).toWire() });
  }
}

/** Unflushed writes to one side past which the other side is paused (it resumes at half). */
export const MAX_QUEUED_MESSAGES = 4096;
/** Unflushed bytes to one side past which the other side is paused (it resumes at half): 8 MiB. */
export const MAX_QUEUED_BYTES = 8 * 1024 * 1024;
/** How long a side may leave paused writes unread before it counts as gone. */
export const STALL_TIMEOUT_MS = 30_000;

/** `params[member].toolCallId`, when there is one. */
function toolCallIdOf(params: unknown, member: 'update' | 'toolCall'): unknown {
  if (!isObject(params)) return undefined;
  const inner = params[member];
  return isObject(inner) ? inner.toolCallId : undefined;
}

function invalidFromAgent(id: RequestId | null, detail: string): Record<string, unknown> {
  return { jsonrpc: '2.0', id, error: ProtocolError.invalidRequest(detail).toWire() };
}
