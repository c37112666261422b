import type { CallerContext, ExitStatus, TerminalId } from '../terminal-spec.js';

export interface SpawnedEvent {
  readonly terminalId: TerminalId;
  readonly pid: number;
  readonly caller: CallerContext;
}

export interface ExitedEvent {
  readonly terminalId: TerminalId;
  readonly exitStatus: ExitStatus;
  readonly durationMs: number;
  readonly totalBytes: number;
  readonly droppedBytes: number;
  /** Hex sha256 of every byte the command wrote, or `null` when digests are off. */
  readonly outputSha256: string | null;
  readonly caller: CallerContext;
}

/**
 * Lifecycle events after the gate allowed a spawn. Called synchronously, in
 * order (spawned before exited) for each terminal. An observer that throws is
 * logged and ignored: the command already runs.
 */
export interface TerminalObserver {
  onSpawned(event: SpawnedEvent): void;
  onExited(event: ExitedEvent): void;
}

export const TERMINAL_OBSERVER: unique symbol = Symbol.for('termgate.TerminalObserver');
