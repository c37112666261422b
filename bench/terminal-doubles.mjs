/**
 * The benches' gate and observer for a bare `ProcessTerminalHost` (no policy,
 * no audit): what test-support/terminal-doubles.ts is to the tests.
 */

const ALLOW = Object.freeze({ allow: true, reason: 'no policy bound' });

/** Allows every verb; it judges nothing and records nothing. */
export class AllowAllGate {
  decide() {
    return ALLOW;
  }
}

/** Ignores every lifecycle event. */
export class NoopTerminalObserver {
  onSpawned() {}
  onExited() {}
}
