import { TermhostError } from './errors.js';
import type { Gate, GateDecision, GateVerb } from './ports/gate.js';
import type { CallerContext, ResolvedTerminalSpec, TerminalId } from './terminal-spec.js';

/** Resolves with `gate`'s allowing decision; anything else (refusal, throw, rejection, junk) is GATE_DENIED. */
export async function decide(
  gate: Gate,
  verb: GateVerb,
  terminalId: TerminalId,
  spec: ResolvedTerminalSpec,
  caller: CallerContext,
): Promise<Extract<GateDecision, { allow: true }>> {
  let decision: GateDecision;
  try {
    decision = await gate.decide({ verb, terminalId, spec, caller });
  } catch (error) {
    const reason = `the gate failed: ${error instanceof Error ? error.message : String(error)}`;
    throw new TermhostError('GATE_DENIED', `${verb} denied: ${reason}`, { verb, reason, ruleIds: [] });
  }
  if (typeof decision === 'object' && decision !== null && decision.allow === true) return decision;
  const reason =
    typeof decision === 'object' && decision !== null && typeof decision.reason === 'string'
      ? decision.reason
      : 'the gate returned no decision';
  const ruleIds =
    typeof decision === 'object' && decision !== null && !decision.allow && Array.isArray(decision.ruleIds)
      ? [...decision.ruleIds]
      : [];
  const approval =
    typeof decision === 'object' && decision !== null && !decision.allow ? decision.approval : undefined;
  throw new TermhostError('GATE_DENIED', `${verb} denied: ${reason}`, {
    verb,
    reason,
    ruleIds,
    ...(approval !== undefined && { approval }),
  });
}
