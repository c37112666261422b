import type { TerminalObserver } from '../ports/terminal-observer.js';

/** Ignores every lifecycle event: the observer bound when nothing audits. */
export class NoopTerminalObserver implements TerminalObserver {
  onSpawned(): void {}
  onExited(): void {}
}
