import type { Gate, GateDecision } from '../ports/gate.js';

const ALLOW: GateDecision = Object.freeze({ allow: true, reason: 'no policy bound' });

/**
 * Allows every verb. The composition root binds it only until a policy gate
 * exists; it judges nothing and records nothing.
 */
export class AllowAllGate implements Gate {
  decide(): GateDecision {
    return ALLOW;
  }
}
