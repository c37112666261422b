import type { Gate, GateDecision } from '../packages/termhost/src/ports/gate.js';
import type { TerminalObserver } from '../packages/termhost/src/ports/terminal-observer.js';

/**
 * Test doubles of the termhost's ports, for hosts that need no policy and
 * no audit (the termhost's and core's own tests). Imported by relative
 * path. The `termgate` CLI never has them: its gate is the policy gate, and
 * a host has no default gate or observer.
 */

const ALLOW: GateDecision = Object.freeze({ allow: true, reason: 'no policy bound' });

/** Allows every verb; it judges nothing and records nothing. */
export class AllowAllGate implements Gate {
  decide(): GateDecision {
    return ALLOW;
  }
}

/** Ignores every lifecycle event. */
export class NoopTerminalObserver implements TerminalObserver {
  onSpawned(): void {}
  onExited(): void {}
}
