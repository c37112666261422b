import { randomUUID } from 'node:crypto';
import type { ApprovalAnswer, ApprovalQuestion, Approver, GateRequest } from '@termgate/termhost';
import { quoteArgv, type RecordedDecision } from './audit-events/events.js';
import { describeCause } from './describe-cause.js';

/** The channel recorded when a request came with no approver. */
export const NO_APPROVER_CHANNEL = 'none';

/** One `ask` about to be put to the caller's approver. */
export interface AskedApproval {
  readonly question: ApprovalQuestion;
  readonly channel: string;
  /** Asks (once) and resolves with the answer; never rejects. */
  answer(): Promise<ApprovalAnswer>;
  /** Milliseconds from the ask to its answer (or to now). */
  latencyMs(): number;
}

/**
 * The gate's approvals: builds questions and remembers `allow_always`
 * answers. An always-answer covers the exact request (command line, or
 * program and arguments), in the exact resolved cwd, with the same client-set
 * variable names and values, in the same caller scope (an ACP session; the
 * whole server for MCP) and for the same principal (one person's "always"
 * never covers another's), for this object's life. Never a prefix.
 */
export class Approvals {
  private readonly always = new Map<string, string>();

  constructor(private readonly now: () => number) {}

  /** The approval id of an earlier `allow_always` covering this request, if any. */
  approvedAlways(request: GateRequest, decided: RecordedDecision): string | undefined {
    return this.always.get(alwaysKey(request, decided));
  }

  rememberAlways(request: GateRequest, decided: RecordedDecision, asked: AskedApproval): void {
    this.always.set(alwaysKey(request, decided), asked.question.approvalId);
  }

  prepare(request: GateRequest, decided: RecordedDecision): AskedApproval {
    const { spec } = request;
    const question: ApprovalQuestion = {
      approvalId: randomUUID(),
      terminalId: request.terminalId,
      command: spec.command,
      args: spec.args,
      commandLine: spec.args === null ? spec.command : quoteArgv([spec.command, ...spec.args]),
      cwd: decided.resolvedCwd ?? spec.cwd,
      envNames: Object.keys(spec.env).sort(),
      ruleIds: [...decided.ruleIds],
      reason: decided.reason,
    };
    const approver: Approver | undefined = request.caller.approver;
    const channel = approver?.channel ?? NO_APPROVER_CHANNEL;
    let started: number | undefined;
    let ended: number | undefined;
    return {
      question,
      channel,
      answer: async () => {
        started = this.now();
        const answer = await askSafely(approver, question);
        ended = this.now();
        return answer;
      },
      latencyMs: () => Math.max(0, (ended ?? this.now()) - (started ?? this.now())),
    };
  }
}

const OUTCOMES = new Set<string>([
  'allow_once',
  'allow_always',
  'deny',
  'cancelled',
  'timeout',
  'unavailable',
  'pending',
]);

/** The approver's answer when well-formed; `unavailable` when there is none, it throws or answers junk. */
async function askSafely(
  approver: Approver | undefined,
  question: ApprovalQuestion,
): Promise<ApprovalAnswer> {
  if (approver === undefined) {
    return {
      outcome: 'unavailable',
      channel: NO_APPROVER_CHANNEL,
      detail: 'this client offers no way to ask a person',
    };
  }
  try {
    const answer: unknown = await approver.ask(question);
    if (
      typeof answer === 'object' &&
      answer !== null &&
      OUTCOMES.has((answer as ApprovalAnswer).outcome) &&
      typeof (answer as ApprovalAnswer).channel === 'string'
    ) {
      return answer as ApprovalAnswer;
    }
    return { outcome: 'unavailable', channel: approver.channel, detail: 'the approver gave no valid answer' };
  } catch (error) {
    return {
      outcome: 'unavailable',
      channel: approver.channel,
      detail: `asking failed: ${describeCause(error)}`,
    };
  }
}

/** Why an ask that was not approved is refused: a person's "no" reads differently from a question nobody answered. */
export function refusalReason(answer: ApprovalAnswer, policyReason: string): string {
  const who = answer.answeredBy
    ? ` (${answer.answeredBy} via ${answer.channel})`
    : ` (via ${answer.channel})`;
  const detail = answer.detail ? `: ${answer.detail}` : '';
  switch (answer.outcome) {
    case 'deny':
      return `declined by a person${who}; nothing was run. The policy asks before it: ${policyReason}`;
    case 'cancelled':
      return `the approval question was cancelled before anyone approved it${detail}; nothing was run. The policy asks before it: ${policyReason}`;
    case 'timeout':
      return `nobody answered the approval question in time${detail}; nothing was run. The policy asks before it: ${policyReason}`;
    case 'pending':
      return `approval was requested from the client; nothing runs until a person answers. The policy asks before it: ${policyReason}`;
    default:
      return `approval needed but could not be asked for${detail}; nothing was run. The policy asks before it: ${policyReason}`;
  }
}

function alwaysKey(request: GateRequest, decided: RecordedDecision): string {
  const { spec, caller } = request;
  return JSON.stringify([
    caller.scope ?? '',
    caller.principal?.issuer ?? null,
    caller.principal?.subject ?? null,
    spec.command,
    spec.args,
    decided.resolvedCwd ?? spec.cwd,
    Object.entries(spec.env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  ]);
}
