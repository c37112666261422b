import type { Gate, GateDecision } from '../ports/gate.js';

const ALLOW: GateDecision = Object.freeze({ allow: true, reason: 'no policy bound' });

/**
 * Allows every verb; it judges nothing and records nothing. For hosts that
 * need no policy, such as the termhost's and core's own tests. The `termgate`
 * CLI never binds it: its gate is the policy gate, and the host has no default.
 */
export class AllowAllGate implements Gate {
  decide(): GateDecision {
    return ALLOW;
  }
}
