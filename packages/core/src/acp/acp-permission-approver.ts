import { randomUUID } from 'node:crypto';
import type { ApprovalAnswer, ApprovalOutcome, Approver } from '@termgate/termhost';
import { approvalChoices, approvalMessage } from '../approval/approval-form.js';
import { OutgoingRequestError, type OutgoingRequests } from '../jsonrpc/outgoing-requests.js';
import { ACP_REQUEST_PERMISSION, ACP_SESSION_UPDATE } from './acp-methods.js';

/** The channel recorded in the audit trail for answers given in the editor. */
export const ACP_PERMISSION_CHANNEL = 'acp-permission';

/**
 * Ids termgate mints towards the editor (its own tool calls and JSON-RPC
 * requests) begin with this. The proxy drops anything from the agent that
 * names one, so the agent can never update what the editor shows for them.
 */
export const TERMGATE_ID_PREFIX = 'termgate-';

/** True for an id in termgate's namespace (see {@link TERMGATE_ID_PREFIX}). */
export function isTermgateId(id: unknown): boolean {
  return typeof id === 'string' && id.startsWith(TERMGATE_ID_PREFIX);
}

/** Default time the editor's person may take to answer: 120 s. */
export const DEFAULT_ACP_APPROVAL_TIMEOUT_MS = 120_000;

export interface AcpPermissionApproverOptions {
  /** Requests to the editor. */
  readonly requests: OutgoingRequests;
  /** Notifications to the editor (the `tool_call` announcing a new tool call). */
  readonly notify: (message: Record<string, unknown>) => void;
  readonly sessionId: string;
  /**
   * The agent's open tool call the terminal probably belongs to, when known:
   * named in the question as text only, never as the question's tool call.
   */
  readonly agentToolCallId?: () => string | undefined;
  /**
   * Whether `allow_always` may be offered: only in a session the editor
   * created through the proxy (default false: allow once or deny).
   */
  readonly allowAlways?: () => boolean;
  /** Aborted when the prompt turn is cancelled: the question is withdrawn and the answer is `cancelled`. */
  readonly signal: () => AbortSignal;
  readonly timeoutMs: number;
  /** The editor's self-declared name (`clientInfo.name` of its `initialize`). */
  readonly editorName?: () => string | undefined;
}

const OPTION_OUTCOMES: Readonly<Record<string, ApprovalOutcome>> = {
  allow_once: 'allow_once',
  allow_always: 'allow_always',
  reject_once: 'deny',
};

/**
 * Asks the editor's person with `session/request_permission`, showing the
 * exact line that was judged (never the agent's description of it).
 *
 * Contract:
 * - The question is always about a tool call termgate announces itself,
 *   `termgate-approval-<random UUID>`: an `execute` tool call titled with the
 *   command line, marked completed or failed once answered. The agent cannot
 *   predict its id, and the proxy drops anything from the agent naming an id
 *   of termgate's, so what the editor shows for it is termgate's alone. The
 *   agent's own tool call, when known, is mentioned in the text only.
 * - Options: allow once, allow this exact line for the rest of the session
 *   (`allow_always`; never a prefix; only when `allowAlways()`), deny
 *   (`reject_once`). An answer naming an option not offered is `unavailable`.
 * - `cancelled` (the editor's answer, or the prompt turn cancelled), no
 *   answer within `timeoutMs` (`timeout`), or any failure (`unavailable`)
 *   never allow.
 */
export function acpPermissionApprover(options: AcpPermissionApproverOptions): Approver {
  return {
    channel: ACP_PERMISSION_CHANNEL,
    ask: async (question): Promise<ApprovalAnswer> => {
      const editor = options.editorName?.();
      const by = editor !== undefined ? { answeredBy: editor } : {};
      const agentToolCall = options.agentToolCallId?.();
      const offered =
        options.allowAlways?.() === true ? OPTIONS : OPTIONS.filter((o) => o !== 'allow_always');
      const toolCallId = `${TERMGATE_ID_PREFIX}approval-${randomUUID()}`;
      const update = (fields: Record<string, unknown>) =>
        options.notify({
          jsonrpc: '2.0',
          method: ACP_SESSION_UPDATE,
          params: { sessionId: options.sessionId, update: { toolCallId, ...fields } },
        });
      update({
        sessionUpdate: 'tool_call',
        title: question.commandLine,
        kind: 'execute',
        status: 'pending',
      });
      const message =
        agentToolCall === undefined
          ? approvalMessage(question)
          : `${approvalMessage(question)}\nThe agent's tool call: ${describeAgentId(agentToolCall)}`;
      let answer: ApprovalAnswer;
      try {
        const result = await options.requests.request(
          ACP_REQUEST_PERMISSION,
          {
            sessionId: options.sessionId,
            toolCall: {
              toolCallId,
              title: question.commandLine,
              kind: 'execute',
              status: 'pending',
              content: [{ type: 'content', content: { type: 'text', text: message } }],
              rawInput: {
                command: question.command,
                ...(question.args !== null && { args: [...question.args] }),
                cwd: question.cwd,
                envNames: [...question.envNames],
                ruleIds: [...question.ruleIds],
                reason: question.reason,
              },
            },
            options: approvalChoices('this session')
              .map((choice) => ({
                optionId: choice.const === 'deny' ? 'reject_once' : choice.const,
                name: choice.title,
                kind: choice.const === 'deny' ? 'reject_once' : choice.const,
              }))
              .filter((option) => offered.includes(option.optionId)),
          },
          { timeoutMs: options.timeoutMs, signal: options.signal() },
        );
        answer = { ...permissionAnswer(result, offered), ...by };
      } catch (error) {
        const kind = error instanceof OutgoingRequestError ? error.kind : 'error';
        answer = {
          outcome: kind === 'timeout' ? 'timeout' : kind === 'cancelled' ? 'cancelled' : 'unavailable',
          channel: ACP_PERMISSION_CHANNEL,
          detail: (error as Error).message,
        };
      }
      const approved = answer.outcome === 'allow_once' || answer.outcome === 'allow_always';
      update({ sessionUpdate: 'tool_call_update', status: approved ? 'completed' : 'failed' });
      return answer;
    },
  };
}

const OPTIONS: readonly string[] = Object.keys(OPTION_OUTCOMES);

/** The agent's id as the question shows it: quoted when plain and short, else not at all (it is the agent's text). */
function describeAgentId(id: string): string {
  return /^[A-Za-z0-9._:/-]{1,64}$/.test(id)
    ? `"${id}" (named by the agent)`
    : '(an id with unusual characters)';
}

/** The answer a `session/request_permission` result means; anything not offered is `unavailable`. */
function permissionAnswer(result: unknown, offered: readonly string[]): ApprovalAnswer {
  const outcome =
    typeof result === 'object' && result !== null ? (result as { outcome?: unknown }).outcome : undefined;
  if (typeof outcome === 'object' && outcome !== null) {
    const { outcome: kind, optionId } = outcome as { outcome?: unknown; optionId?: unknown };
    if (kind === 'cancelled') return { outcome: 'cancelled', channel: ACP_PERMISSION_CHANNEL };
    if (kind === 'selected' && typeof optionId === 'string' && offered.includes(optionId)) {
      return { outcome: OPTION_OUTCOMES[optionId]!, channel: ACP_PERMISSION_CHANNEL };
    }
  }
  return {
    outcome: 'unavailable',
    channel: ACP_PERMISSION_CHANNEL,
    detail: 'the editor answered with an option this question did not offer',
  };
}
