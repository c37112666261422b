import type { ExitedEvent, SpawnedEvent, TerminalObserver } from '../../src/ports/terminal-observer.js';

/** An observer that records every event in order. */
export class RecordingObserver implements TerminalObserver {
  readonly events: Array<{ type: 'spawned'; event: SpawnedEvent } | { type: 'exited'; event: ExitedEvent }> =
    [];

  onSpawned(event: SpawnedEvent): void {
    this.events.push({ type: 'spawned', event });
  }

  onExited(event: ExitedEvent): void {
    this.events.push({ type: 'exited', event });
  }

  exited(terminalId: string): ExitedEvent | undefined {
    for (const entry of this.events) {
      if (entry.type === 'exited' && entry.event.terminalId === terminalId) return entry.event;
    }
    return undefined;
  }
}
