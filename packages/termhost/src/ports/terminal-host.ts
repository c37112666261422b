import type {
  CallerContext,
  ExitStatus,
  TerminalId,
  TerminalOutput,
  TerminalSpec,
} from '../terminal-spec.js';

export interface WaitOptions {
  /** Aborting stops the wait (it rejects with an AbortError); the command keeps running. */
  readonly signal?: AbortSignal;
  /**
   * Sees every byte written after it subscribed, exactly once and in order,
   * with the running total of bytes ever written. Unsubscribed when the wait ends.
   */
  readonly onOutput?: (chunk: Uint8Array, totalBytes: number) => void;
}

export interface OutputOptions {
  /**
   * Return only the retained output at or after this offset in the whole
   * stream (bytes, an integer ≥ 0); the start moves forward to a character
   * boundary. Output already dropped by the retention limit is gone: the
   * result then starts at the oldest retained byte. Default: all retained output.
   */
  readonly fromByte?: number;
}

/**
 * Protocol-neutral terminals. Every method consults the gate first; a refusal
 * rejects with `TermhostError('GATE_DENIED')` and has no effect.
 * Unknown or released ids reject with `TermhostError('TERMINAL_NOT_FOUND')`.
 */
export interface TerminalHost {
  /** Spawns the command and resolves with its id once the process started. */
  create(spec: TerminalSpec, caller?: CallerContext): Promise<TerminalId>;
  /** A snapshot of the retained output; works while running and after exit. */
  output(id: TerminalId, caller?: CallerContext, options?: OutputOptions): Promise<TerminalOutput>;
  /** Resolves once the command exited; at once (any number of times) if it already has. */
  waitForExit(id: TerminalId, options?: WaitOptions, caller?: CallerContext): Promise<ExitStatus>;
  /**
   * SIGTERM to the whole process group, SIGKILL after the grace period to
   * whatever survives. Resolves once the command counts as exited, so the
   * next `output` carries its exit status. Idempotent. The terminal stays
   * readable and waitable.
   */
  kill(id: TerminalId, caller?: CallerContext): Promise<void>;
  /** Kills if still running and forgets the id. Resolves once the group is gone. */
  release(id: TerminalId, caller?: CallerContext): Promise<void>;
  /** Kills and releases every terminal of `scope` (all scopes when omitted). Not gated: shutdown. */
  closeAll(scope?: string): Promise<void>;
}

export const TERMINAL_HOST: unique symbol = Symbol.for('termgate.TerminalHost');
