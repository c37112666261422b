import type { CallerContext, TerminalHost } from '@termgate/termhost';
import { TerminalMirror } from './terminal-mirror.js';

/** Display copies kept at once; past it, copies of terminals that exited (or cannot be read) are dropped, oldest first. */
export const MAX_MIRRORS = 256;

/** At most four refreshes a second per tool call. */
export const DEFAULT_DISPLAY_INTERVAL_MS = 250;

type Json = Record<string, unknown>;

export interface ToolCallTerminalRelayOptions {
  /** Minimum time between two refreshes of one tool call. Default {@link DEFAULT_DISPLAY_INTERVAL_MS}. */
  readonly intervalMs?: number;
  /** Newest output bytes shown per terminal. Default 64 KiB. */
  readonly maxDisplayBytes?: number;
}

interface ToolCallState {
  readonly sessionId: string;
  readonly toolCallId: string;
  /** The agent's latest `content` for this tool call, terminal items included. */
  template: readonly unknown[];
  /** Unsubscribe functions, one per embedded terminal. */
  subscriptions: (() => void)[];
  timer: NodeJS.Timeout | undefined;
  lastFlush: number;
  lastSent: string;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function terminalIdOf(item: unknown): string | null {
  return isObject(item) && item.type === 'terminal' && typeof item.terminalId === 'string'
    ? item.terminalId
    : null;
}

/**
 * Rewrites terminal content in the agent's `session/update` tool calls for an
 * editor that does not own those terminals, and keeps it current.
 *
 * What the editor receives:
 * - In a `tool_call` or `tool_call_update` whose `content` holds
 *   `{type: "terminal", terminalId}`, each such item is replaced, in place, by
 *   `{type: "content", content: {type: "text", text}}`; every other field and
 *   item is passed on as the agent sent it. `text` is the terminal's output so
 *   far (see {@link TerminalMirror}).
 * - While the command runs and once it exits, the relay itself sends
 *   `session/update` notifications `{sessionId, update: {sessionUpdate:
 *   "tool_call_update", toolCallId, content}}` with the agent's latest
 *   content for that tool call, rewritten with the current texts: at most one
 *   per `intervalMs` per tool call, only when the text changed, and always one
 *   after the exit (its text ends with an exit line such as `[exited with code 0]`).
 *   They carry only `content`, so the agent's `status`, `title` etc. stand.
 * - A tool call update from the agent whose `content` no longer holds a
 *   terminal ends the relay for that tool call.
 */
export class ToolCallTerminalRelay {
  private readonly mirrors = new Map<string, TerminalMirror>();
  private readonly toolCalls = new Map<string, ToolCallState>();
  private readonly intervalMs: number;
  private disposed = false;

  constructor(
    private readonly host: TerminalHost,
    private readonly callerFor: (sessionId: string) => CallerContext,
    private readonly emit: (params: Json) => void,
    private readonly options: ToolCallTerminalRelayOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? DEFAULT_DISPLAY_INTERVAL_MS;
  }

  /** The `session/update` params to forward: `params` itself when nothing needs rewriting. */
  rewrite(params: unknown): unknown {
    if (this.disposed || !isObject(params) || typeof params.sessionId !== 'string') return params;
    const update = params.update;
    if (!isObject(update) || typeof update.toolCallId !== 'string') return params;
    if (update.sessionUpdate !== 'tool_call' && update.sessionUpdate !== 'tool_call_update') return params;
    if (!('content' in update)) return params;
    const sessionId = params.sessionId;
    const key = `${sessionId}\u0000${update.toolCallId}`;
    const content = update.content;
    const terminalIds = Array.isArray(content)
      ? content.map(terminalIdOf).filter((id): id is string => id !== null)
      : [];
    if (terminalIds.length === 0) {
      this.forget(key);
      return params;
    }
    const state = this.track(key, sessionId, update.toolCallId, content as unknown[], terminalIds);
    const rendered = this.render(state);
    state.lastSent = JSON.stringify(rendered);
    return { ...params, update: { ...update, content: rendered } };
  }

  /**
   * The `session/request_permission` params to forward: its `toolCall` may
   * embed terminals too (`ToolCallUpdate.content`). They are replaced by
   * their current text once; a permission request is not kept current.
   */
  rewritePermission(params: unknown): unknown {
    if (this.disposed || !isObject(params) || typeof params.sessionId !== 'string') return params;
    const toolCall = params.toolCall;
    if (!isObject(toolCall) || !Array.isArray(toolCall.content)) return params;
    if (!toolCall.content.some((item) => terminalIdOf(item) !== null)) return params;
    const sessionId = params.sessionId;
    const content = toolCall.content.map((item) => {
      const terminalId = terminalIdOf(item);
      if (terminalId === null) return item;
      return { type: 'content', content: { type: 'text', text: this.mirror(sessionId, terminalId).text() } };
    });
    return { ...params, toolCall: { ...toolCall, content } };
  }

  /**
   * Sends now every update of `sessionId` that is waiting for its interval,
   * so that a turn's tool calls are current before the turn's answer
   * (`session/prompt` response) reaches the editor.
   */
  flushSession(sessionId: string): void {
    for (const state of this.toolCalls.values()) {
      if (state.sessionId !== sessionId || state.timer === undefined) continue;
      clearTimeout(state.timer);
      this.flush(state);
    }
  }

  /** Stops every mirror and timer; sends nothing more. */
  dispose(): void {
    this.disposed = true;
    for (const state of this.toolCalls.values()) clearTimeout(state.timer);
    this.toolCalls.clear();
    for (const mirror of this.mirrors.values()) mirror.stop();
    this.mirrors.clear();
  }

  private track(
    key: string,
    sessionId: string,
    toolCallId: string,
    content: readonly unknown[],
    terminalIds: readonly string[],
  ): ToolCallState {
    let state = this.toolCalls.get(key);
    if (state === undefined) {
      state = {
        sessionId,
        toolCallId,
        template: content,
        subscriptions: [],
        timer: undefined,
        lastFlush: 0,
        lastSent: '',
      };
      this.toolCalls.set(key, state);
    }
    for (const unsubscribe of state.subscriptions) unsubscribe();
    state.template = content;
    const tracked = state;
    state.subscriptions = [...new Set(terminalIds)].map((id) =>
      this.mirror(sessionId, id).onChange(() => this.schedule(tracked)),
    );
    return state;
  }

  private mirror(sessionId: string, terminalId: string): TerminalMirror {
    const key = `${sessionId}\u0000${terminalId}`;
    let mirror = this.mirrors.get(key);
    if (mirror === undefined) {
      mirror = new TerminalMirror(
        this.host,
        terminalId,
        this.callerFor(sessionId),
        this.options.maxDisplayBytes,
      );
      this.mirrors.set(key, mirror);
      mirror.start();
      this.evictSettledMirrors();
    }
    return mirror;
  }

  /** Keeps memory bounded over a long session: drops the oldest settled copies past {@link MAX_MIRRORS}. */
  private evictSettledMirrors(): void {
    for (const [key, mirror] of this.mirrors) {
      if (this.mirrors.size <= MAX_MIRRORS) return;
      if (!mirror.settled) continue;
      mirror.stop();
      this.mirrors.delete(key);
    }
  }

  private render(state: ToolCallState): unknown[] {
    return state.template.map((item) => {
      const terminalId = terminalIdOf(item);
      if (terminalId === null) return item;
      const text = this.mirror(state.sessionId, terminalId).text();
      return { type: 'content', content: { type: 'text', text } };
    });
  }

  private schedule(state: ToolCallState): void {
    if (this.disposed || state.timer !== undefined) return;
    const delay = Math.max(0, state.lastFlush + this.intervalMs - Date.now());
    state.timer = setTimeout(() => this.flush(state), delay);
  }

  private flush(state: ToolCallState): void {
    state.timer = undefined;
    if (this.disposed || this.toolCalls.get(`${state.sessionId}\u0000${state.toolCallId}`) !== state) return;
    const content = this.render(state);
    const serialized = JSON.stringify(content);
    if (serialized === state.lastSent) return;
    state.lastSent = serialized;
    state.lastFlush = Date.now();
    this.emit({
      sessionId: state.sessionId,
      update: { sessionUpdate: 'tool_call_update', toolCallId: state.toolCallId, content },
    });
  }

  private forget(key: string): void {
    const state = this.toolCalls.get(key);
    if (state === undefined) return;
    clearTimeout(state.timer);
    for (const unsubscribe of state.subscriptions) unsubscribe();
    this.toolCalls.delete(key);
  }
}
