import type { ApprovalAnswer, ApprovalOutcome, ApprovalQuestion, Approver } from '@termgate/termhost';
import { approvalElicitation, elicitationOutcome } from '../../approval/approval-form.js';
import type { Params } from '../../jsonrpc/messages.js';
import { OutgoingRequestError, type OutgoingRequests } from '../../jsonrpc/outgoing-requests.js';
import { META_CLIENT_CAPABILITIES } from '../protocol-versions.js';
import { requestMeta } from '../request-era.js';
import { argumentsDigest, type RequestStateProblem, type RequestStateSealer } from './request-state.js';

/** Channels recorded in the audit trail's `termgate.approval.channel`. */
export const MCP_INPUT_REQUIRED_CHANNEL = 'mcp-input-required';
export const MCP_ELICITATION_CHANNEL = 'mcp-elicitation';

/** Default time a legacy elicitation waits for its answer: 120 s. */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 120_000;

/** The one input request key of an approval round trip. */
export const APPROVAL_INPUT_KEY = 'approve';

/** The tool whose calls may ask. */
const ASKING_TOOL = 'terminal_create';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True when `capabilities` (MCP `ClientCapabilities`) allow a form elicitation: `elicitation: {}` or `{form: …}`. */
export function declaresFormElicitation(capabilities: unknown): boolean {
  if (!isObject(capabilities) || !isObject(capabilities.elicitation)) return false;
  const elicitation = capabilities.elicitation;
  return Object.keys(elicitation).length === 0 || 'form' in elicitation;
}

/**
 * What one `tools/call` of the modern era brings to an approval: the
 * approver to put in its caller context, or a refusal to answer instead of
 * running anything, and after the call, the `input_required` result when
 * the approver deferred its question.
 */
export type ModernApproval =
  | { readonly kind: 'refuse'; readonly message: string }
  | {
      readonly kind: 'run';
      readonly approver: Approver | undefined;
      /** After the call: the `input_required` result body when a question was deferred, else null. */
      inputRequired(): Record<string, unknown> | null;
    };

const REJECTED: Record<Exclude<RequestStateProblem, 'expired'>, string> = {
  malformed: 'it is not a state this server issued',
  tampered: 'it was altered, or was issued by another server process',
  mismatched: 'it was issued for a call with other arguments',
  replayed: 'it was already used once',
};

/**
 * Approvals over MCP for one server: the modern era's `input_required`
 * round trip (stateless: everything travels in a sealed `requestState`) and
 * the legacy era's `elicitation/create` server request.
 */
export class McpApprovals {
  constructor(
    private readonly sealer: RequestStateSealer,
    private readonly timeoutMs: number,
  ) {}

  /**
   * Modern (2026-07-28): a first call gets an approver that defers the
   * question into an `input_required` result, when the request's client
   * capabilities declare form elicitation (else none: an ask is refused as
   * not askable). A retry carrying `requestState` is verified first:
   * - tampered, malformed, for other arguments, or replayed: refused, nothing runs;
   * - expired, or missing/malformed `inputResponses`: asked again (a fresh state);
   * - valid: the approver answers with the person's answer, once.
   */
  modern(
    tool: string,
    args: Record<string, unknown>,
    params: Params | undefined,
    clientName?: string,
  ): ModernApproval {
    const canAsk = declaresFormElicitation(requestMeta(params)?.[META_CLIENT_CAPABILITIES]);
    if (tool !== ASKING_TOOL) return { kind: 'run', approver: undefined, inputRequired: () => null };
    const digest = argumentsDigest(tool, args);
    const deferred = () => this.deferred(tool, digest, canAsk);
    const hasState = params !== undefined && 'requestState' in params;
    if (!hasState) return deferred();
    const opened = this.sealer.open(params.requestState, tool, digest);
    if (!opened.ok) {
      if (opened.problem === 'expired') return deferred();
      return {
        kind: 'refuse',
        message: `The approval state (requestState) was rejected: ${REJECTED[opened.problem]}. Nothing was run. Call terminal_create again without requestState to be asked afresh.`,
      };
    }
    const responses = params.inputResponses;
    const outcome = isObject(responses) ? elicitationOutcome(responses[APPROVAL_INPUT_KEY]) : null;
    if (outcome === null) return deferred();
    const answer: ApprovalAnswer = {
      outcome,
      channel: MCP_INPUT_REQUIRED_CHANNEL,
      ...(clientName !== undefined && { answeredBy: clientName }),
      answersApprovalId: opened.claims.approvalId,
    };
    let used = false;
    const approver: Approver = {
      channel: MCP_INPUT_REQUIRED_CHANNEL,
      ask: async () => {
        // One answer answers one question.
        if (used)
          return {
            outcome: 'unavailable',
            channel: MCP_INPUT_REQUIRED_CHANNEL,
            detail: 'the answer was already used',
          };
        used = true;
        return answer;
      },
    };
    return { kind: 'run', approver, inputRequired: () => null };
  }

  private deferred(tool: string, digest: string, canAsk: boolean): ModernApproval {
    if (!canAsk) return { kind: 'run', approver: undefined, inputRequired: () => null };
    let asked: ApprovalQuestion | undefined;
    const approver: Approver = {
      channel: MCP_INPUT_REQUIRED_CHANNEL,
      ask: async (question) => {
        asked = question;
        return { outcome: 'pending', channel: MCP_INPUT_REQUIRED_CHANNEL };
      },
    };
    return {
      kind: 'run',
      approver,
      inputRequired: () => {
        if (asked === undefined) return null;
        return {
          resultType: 'input_required',
          inputRequests: {
            [APPROVAL_INPUT_KEY]: { method: 'elicitation/create', params: approvalElicitation(asked) },
          },
          requestState: this.sealer.seal({ tool, argumentsDigest: digest, approvalId: asked.approvalId }),
        };
      },
    };
  }

  /**
   * Legacy (2025-11-25): when the client declared form elicitation in
   * `initialize`, an approver that sends `elicitation/create` while the
   * call is pending. No answer within the timeout is `timeout`; the call's
   * cancellation cancels the question (`cancelled`).
   */
  legacy(
    outgoing: OutgoingRequests,
    capabilities: unknown,
    signal: AbortSignal,
    clientName?: string,
  ): Approver | undefined {
    if (!declaresFormElicitation(capabilities)) return undefined;
    const timeoutMs = this.timeoutMs;
    const by = clientName !== undefined ? { answeredBy: clientName } : {};
    return {
      channel: MCP_ELICITATION_CHANNEL,
      ask: async (question): Promise<ApprovalAnswer> => {
        try {
          const result = await outgoing.request('elicitation/create', approvalElicitation(question), {
            timeoutMs,
            signal,
          });
          const outcome = elicitationOutcome(result);
          if (outcome === null) {
            return {
              outcome: 'unavailable',
              channel: MCP_ELICITATION_CHANNEL,
              ...by,
              detail: 'the client answered the elicitation with something that is not an answer',
            };
          }
          return { outcome, channel: MCP_ELICITATION_CHANNEL, ...by };
        } catch (error) {
          const kind = error instanceof OutgoingRequestError ? error.kind : 'error';
          const outcome: ApprovalOutcome =
            kind === 'timeout' ? 'timeout' : kind === 'cancelled' ? 'cancelled' : 'unavailable';
          return {
            outcome,
            channel: MCP_ELICITATION_CHANNEL,
            ...(outcome !== 'timeout' && outcome !== 'cancelled' && by),
            detail: (error as Error).message,
          };
        }
      },
    };
  }
}
