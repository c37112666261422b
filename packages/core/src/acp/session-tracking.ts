import { idKey, isAnyId, type RequestId } from '../jsonrpc/request-id.js';

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The editor's requests that open a session (ACP v1 and its unstable additions). */
const SESSION_OPENINGS: ReadonlySet<string> = new Set([
  'session/new',
  'session/load',
  'session/fork',
  'session/resume',
]);

/**
 * The sessions the editor created (or loaded, forked, resumed) through the
 * proxy: a session counts once the agent answered the editor's opening
 * request with a result (its `sessionId`, else the one the request named).
 * An error answer, or a session only the agent names, never counts.
 */
export class EditorSessions {
  readonly #created = new Set<string>();
  /** Opening requests in flight: id key → the sessionId the request names, if any. */
  readonly #opening = new Map<string, string | null>();

  /** Sees every message from the editor. */
  noteRequest(raw: unknown): void {
    if (!isObject(raw) || typeof raw.method !== 'string' || !SESSION_OPENINGS.has(raw.method)) return;
    if (!isAnyId(raw.id)) return;
    const named =
      isObject(raw.params) && typeof raw.params.sessionId === 'string' ? raw.params.sessionId : null;
    this.#opening.set(idKey(raw.id), named);
  }

  /** Sees every response from the agent (`result` undefined for an error). */
  noteResponse(id: RequestId, result: unknown): void {
    const key = idKey(id);
    if (!this.#opening.has(key)) return;
    const named = this.#opening.get(key) ?? null;
    this.#opening.delete(key);
    if (result === undefined) return; // an error: nothing was opened
    const created = isObject(result) && typeof result.sessionId === 'string' ? result.sessionId : named;
    if (created !== null) this.#created.add(created);
  }

  has(sessionId: string): boolean {
    return this.#created.has(sessionId);
  }
}

/**
 * Per session, the agent's latest open `execute` tool call without a
 * terminal (announced, not finished): what an approval question names, as
 * text, as the agent's tool call.
 */
export class OpenExecuteCalls {
  readonly #open = new Map<string, string>();

  /** Sees the params of every `session/update` from the agent. */
  note(params: unknown): void {
    if (!isObject(params) || typeof params.sessionId !== 'string' || !isObject(params.update)) return;
    const { sessionId, update } = params as { sessionId: string; update: Json };
    if (typeof update.toolCallId !== 'string') return;
    const hasTerminal =
      Array.isArray(update.content) && update.content.some((c) => isObject(c) && c.type === 'terminal');
    const finished = update.status === 'completed' || update.status === 'failed';
    if (update.sessionUpdate === 'tool_call' && update.kind === 'execute' && !hasTerminal && !finished) {
      this.#open.set(sessionId, update.toolCallId);
    } else if (this.#open.get(sessionId) === update.toolCallId && (hasTerminal || finished)) {
      this.#open.delete(sessionId);
    }
  }

  /** The session's open execute tool call, forgotten once taken (one question names it). */
  take(sessionId: string): string | undefined {
    const id = this.#open.get(sessionId);
    this.#open.delete(sessionId);
    return id;
  }
}
