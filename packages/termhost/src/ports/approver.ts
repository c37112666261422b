/**
 * What a person is asked before a command the policy put on `ask` runs.
 * Everything shown is what was judged and what will run, byte for byte.
 */
export interface ApprovalQuestion {
  /** Names this approval in the audit trail (`termgate.approval.id` of the ask, answer and spawn records). */
  readonly approvalId: string;
  /** The terminal's id (a `TerminalId`; a string here so that this port does not import the spec it is part of). */
  readonly terminalId: string;
  /** A command line (`args` null) or a program (`args` its arguments), as requested. */
  readonly command: string;
  readonly args: readonly string[] | null;
  /** The whole line to show: the command line, or the argv quoted for a POSIX shell. */
  readonly commandLine: string;
  /** The directory it will run in (resolved). */
  readonly cwd: string;
  /** Names of the variables the client set (never their values). */
  readonly envNames: readonly string[];
  /** The rules that asked (`writes.default` when a write asked). */
  readonly ruleIds: readonly string[];
  /** The policy's reason, one sentence. */
  readonly reason: string;
}

/**
 * - `allow_once`: run it this time;
 * - `allow_always`: run it, and this exact line in this cwd for the rest of
 *   the approver's scope (the server's life for MCP, the session for ACP)
 *   whenever the policy asks for it again (a deny still wins);
 * - `deny`: a person declined;
 * - `cancelled`: the question was dismissed, or the request that asked was cancelled;
 * - `timeout`: nobody answered in time;
 * - `unavailable`: the question could not be put to anyone (no channel, or it failed);
 * - `pending`: the question went to the client inside the answer to this
 *   request, and its answer will come with a new request (MCP 2026-07-28
 *   `input_required`): this request runs nothing.
 */
export type ApprovalOutcome =
  | 'allow_once'
  | 'allow_always'
  | 'deny'
  | 'cancelled'
  | 'timeout'
  | 'unavailable'
  | 'pending';

export interface ApprovalAnswer {
  readonly outcome: ApprovalOutcome;
  /** How the question travelled, e.g. `mcp-elicitation`, `mcp-input-required`, `acp-permission`. */
  readonly channel: string;
  /** The answering client's self-declared name, when it gave one. */
  readonly answeredBy?: string;
  /** Why, when the outcome needs explaining (an error, a rejected state). One sentence. */
  readonly detail?: string;
  /** The approval id of an earlier question this answers (an `input_required` round trip). */
  readonly answersApprovalId?: string;
}

/**
 * Asks a person whether a command may run. Supplied per request by the
 * protocol core through `CallerContext.approver`; consulted by the gate
 * only for an `ask` decision, after the ask is recorded.
 *
 * Contract:
 * - `ask` resolves with an answer and never rejects; failures are
 *   `unavailable` (or `cancelled`/`timeout`), never an allow.
 * - Only `allow_once` and `allow_always` let the command run.
 */
export interface Approver {
  /** The channel answers come through (same as `ApprovalAnswer.channel` when asked). */
  readonly channel: string;
  ask(question: ApprovalQuestion): Promise<ApprovalAnswer>;
}
