/** The ACP v1 client-side terminal methods, as sent on the wire (schema `x-method`). */
export const ACP_TERMINAL_METHODS = Object.freeze({
  create: 'terminal/create',
  output: 'terminal/output',
  waitForExit: 'terminal/wait_for_exit',
  kill: 'terminal/kill',
  release: 'terminal/release',
} as const);

export type AcpTerminalMethod = (typeof ACP_TERMINAL_METHODS)[keyof typeof ACP_TERMINAL_METHODS];

/** ACP v1 protocol-level notification that cancels one request (`params.requestId`). */
export const ACP_CANCEL_REQUEST = '$/cancel_request';

/** `session/update`: how agents report tool calls, and how the proxy keeps embedded terminals current. */
export const ACP_SESSION_UPDATE = 'session/update';

/** `session/prompt`: one turn; the proxy brings the turn's tool calls up to date before its answer. */
export const ACP_SESSION_PROMPT = 'session/prompt';

/** `session/request_permission`: its `toolCall` may embed terminals, which the proxy renders as text. */
export const ACP_REQUEST_PERMISSION = 'session/request_permission';

/** The ACP protocol revision this adapter serves; the caller context reads `acp/1`. */
export const ACP_PROTOCOL = 'acp/1';

const TERMINAL_METHOD_SET: ReadonlySet<string> = new Set(Object.values(ACP_TERMINAL_METHODS));

/** True for exactly the five `terminal/*` methods the adapter serves. */
export function isAcpTerminalMethod(method: unknown): method is AcpTerminalMethod {
  return typeof method === 'string' && TERMINAL_METHOD_SET.has(method);
}

/** The termhost scope of one ACP session: terminals of different sessions never see each other. */
export function acpSessionScope(sessionId: string): string {
  return `acp:${sessionId}`;
}

/** Editor → agent notification that cancels a prompt turn. */
export const ACP_SESSION_CANCEL = 'session/cancel';
