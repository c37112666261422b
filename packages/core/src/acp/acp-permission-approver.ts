import { randomUUID } from 'node:crypto';
import type { ApprovalAnswer, ApprovalOutcome, Approver } from '@termgate/termhost';
import { approvalChoices, approvalMessage } from '../approval/approval-form.js';
import { OutgoingRequestError, type OutgoingRequests } from '../jsonrpc/outgoing-requests.js';
import { ACP_REQUEST_PERMISSION, ACP_SESSION_UPDATE } from './acp-methods.js';

/** The channel recorded in the audit trail for answers given in the editor. */
export const ACP_PERMISSION_CHANNEL = 'acp-permission';

/** Default time the editor's person may take to answer: 120 s. */
export const DEFAULT_ACP_APPROVAL_TIMEOUT_MS = 120_000;

export interface AcpPermissionApproverOptions {
  /** Requests to the editor. */
  readonly requests: OutgoingRequests;
  /** Notifications to the editor (the `tool_call` announcing a new tool call). */
  readonly notify: (message: Record<string, unknown>) => void;
  readonly sessionId: string;
  /** The agent's tool call the terminal belongs to, when known; else a new execute tool call is announced. */
  readonly toolCallId?: () => string | undefined;
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
 * - The tool call is the agent's, when `toolCallId` names one; else termgate
 *   announces a new `execute` tool call titled with the command line, and
 *   marks it completed or failed once answered.
 * - Options: allow once, allow this exact line for the rest of the session
 *   (`allow_always`; never a prefix), deny (`reject_once`).
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
      const existing = options.toolCallId?.();
      const toolCallId = existing ?? `termgate-approval-${randomUUID()}`;
      const update = (fields: Record<string, unknown>) =>
        options.notify({
          jsonrpc: '2.0',
          method: ACP_SESSION_UPDATE,
          params: { sessionId: options.sessionId, update: { toolCallId, ...fields } },
        });
      if (existing === undefined) {
        update({
          sessionUpdate: 'tool_call',
          title: question.commandLine,
          kind: 'execute',
          status: 'pending',
        });
      }
      const message = approvalMessage(question);
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
            options: approvalChoices('this session').map((choice) => ({
              optionId: choice.const === 'deny' ? 'reject_once' : choice.const,
              name: choice.title,
              kind: choice.const === 'deny' ? 'reject_once' : choice.const,
            })),
          },
          { timeoutMs: options.timeoutMs, signal: options.signal() },
        );
        answer = { ...permissionAnswer(result), ...by };
      } catch (error) {
        const kind = error instanceof OutgoingRequestError ? error.kind : 'error';
        answer = {
          outcome: kind === 'timeout' ? 'timeout' : kind === 'cancelled' ? 'cancelled' : 'unavailable',
          channel: ACP_PERMISSION_CHANNEL,
          detail: (error as Error).message,
        };
      }
      if (existing === undefined) {
        const approved = answer.outcome === 'allow_once' || answer.outcome === 'allow_always';
        update({ sessionUpdate: 'tool_call_update', status: approved ? 'completed' : 'failed' });
      }
      return answer;
    },
  };
}

/** The answer a `session/request_permission` result means; anything unexpected is `unavailable`. */
function permissionAnswer(result: unknown): ApprovalAnswer {
  const outcome =
    typeof result === 'object' && result !== null ? (result as { outcome?: unknown }).outcome : undefined;
  if (typeof outcome === 'object' && outcome !== null) {
    const { outcome: kind, optionId } = outcome as { outcome?: unknown; optionId?: unknown };
    if (kind === 'cancelled') return { outcome: 'cancelled', channel: ACP_PERMISSION_CHANNEL };
    if (kind === 'selected' && typeof optionId === 'string' && Object.hasOwn(OPTION_OUTCOMES, optionId)) {
      return { outcome: OPTION_OUTCOMES[optionId]!, channel: ACP_PERMISSION_CHANNEL };
    }
  }
  return {
    outcome: 'unavailable',
    channel: ACP_PERMISSION_CHANNEL,
    detail: 'the editor answered with an option this question did not offer',
  };
}
