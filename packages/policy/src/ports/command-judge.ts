import type { CommandRequest, PolicyDecision } from '../decision.js';

/**
 * Judges one create request. Pure: no I/O besides resolving the cwd, no
 * audit, never throws for bad input (a construct it cannot judge is a deny
 * with a reason). The gate records what it returns.
 *
 * A judge may answer synchronously (the in-process `PolicyEngine`) or with a
 * promise (`ChildProcessCommandJudge`, which judges in a worker process); both
 * are valid. A promise must settle: the gate waits for it, and a rejection
 * is a deny like a throw.
 */
export interface CommandJudge {
  judge(request: CommandRequest): PolicyDecision | Promise<PolicyDecision>;
}

export const COMMAND_JUDGE: unique symbol = Symbol.for('termgate.CommandJudge');
