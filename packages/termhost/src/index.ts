/**
 * Public API of @termgate/termhost: terminals as processes, bytes, limits and
 * exit status: the domain and its ports. No protocol types live here, and
 * no adapter: those are `@termgate/termhost/adapters`. Named exports only.
 */

export { NON_INTERACTIVE_ENV, SHELL_STARTUP_ENV } from './environment.js';
export { TermhostError, type TermhostErrorCode } from './errors.js';
export { checkHostPattern } from './host-pattern.js';
export type {
  ApprovalAnswer,
  ApprovalOutcome,
  ApprovalQuestion,
  Approver,
} from './ports/approver.js';
export { GATE, type Gate, type GateDecision, type GateRequest, type GateVerb } from './ports/gate.js';
export {
  PROCESS_SPAWNER,
  type ProcessExit,
  type ProcessSpawner,
  type SpawnedProcess,
  type SpawnRequest,
} from './ports/process-spawner.js';
export {
  type OutputOptions,
  TERMINAL_HOST,
  type TerminalHost,
  type WaitOptions,
} from './ports/terminal-host.js';
export {
  type ExitedEvent,
  type SpawnedEvent,
  TERMINAL_OBSERVER,
  type TerminalObserver,
} from './ports/terminal-observer.js';
export { EXIT_DRAIN_GRACE_MS } from './process-terminal.js';
export {
  DEFAULT_KILL_GRACE_MS,
  DEFAULT_MAX_OUTPUT_BYTES,
  DEFAULT_MAX_TERMINALS,
  DEFAULT_SHELL_PREFIX,
  ProcessTerminalHost,
  type ProcessTerminalHostOptions,
} from './process-terminal-host.js';
export type { SandboxProfile } from './sandbox-profile.js';
export type {
  CallerContext,
  CallerPrincipal,
  ExitStatus,
  ResolvedTerminalSpec,
  TerminalId,
  TerminalOutput,
  TerminalSpec,
} from './terminal-spec.js';
