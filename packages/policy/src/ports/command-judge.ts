import type { CommandRequest, PolicyDecision } from '../decision.js';

/**
 * Judges one create request. Pure: no I/O besides resolving the cwd, no
 * audit, never throws for bad input (a construct it cannot judge is a deny
 * with a reason). The gate records what it returns.
 */
export interface CommandJudge {
  judge(request: CommandRequest): PolicyDecision;
}

export const COMMAND_JUDGE: unique symbol = Symbol.for('termgate.CommandJudge');
