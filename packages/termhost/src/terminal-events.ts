import type { ExitedEvent, SpawnedEvent, TerminalObserver } from './ports/terminal-observer.js';

/**
 * Tells the observer of every spawn and exit. An observer that throws is
 * reported to `onError` (as `TerminalObserver.<event>`) and never reaches
 * the verb's caller.
 */
export class TerminalEvents {
  readonly #observer: TerminalObserver;
  readonly #onError: (error: unknown, context: string) => void;

  constructor(observer: TerminalObserver, onError: (error: unknown, context: string) => void) {
    this.#observer = observer;
    this.#onError = onError;
  }

  spawned(event: SpawnedEvent): void {
    this.#notify('onSpawned', () => this.#observer.onSpawned(event));
  }

  exited(event: ExitedEvent): void {
    this.#notify('onExited', () => this.#observer.onExited(event));
  }

  #notify(event: string, call: () => void): void {
    try {
      call();
    } catch (error) {
      this.#onError(error, `TerminalObserver.${event}`);
    }
  }
}
