/**
 * Public API of @termgate/termhost: terminals as processes, bytes, limits and
 * exit status. No protocol types live here. Named exports only.
 */

export { AllowAllGate } from './adapters/allow-all-gate.js';
export { CgroupProcessSpawner, createTerminalCgroupRoot } from './adapters/cgroup-process-spawner.js';
export { CrossSpawnProcessSpawner } from './adapters/cross-spawn-process-spawner.js';
export { DeferredTerminalHost } from './adapters/deferred-terminal-host.js';
export { findOnPath } from './adapters/executable-check.js';
export { NoopTerminalObserver } from './adapters/noop-terminal-observer.js';
export {
  BubblewrapSandbox,
  type BubblewrapSandboxOptions,
  SANDBOX_PROXY_PORT,
  type SandboxNetwork,
} from './adapters/sandbox/bubblewrap-sandbox.js';
export { checkHostPattern } from './adapters/sandbox/host-allowlist.js';
export type { RefusedConnection } from './adapters/sandbox/http-allowlist-proxy.js';
export { SandboxUnavailableError } from './adapters/sandbox/sandbox-unavailable-error.js';
export { SETPRIV_DROP_PTRACE, SetprivProcessSpawner } from './adapters/setpriv-process-spawner.js';
export { NON_INTERACTIVE_ENV, SHELL_STARTUP_ENV } from './environment.js';
export { TermhostError, type TermhostErrorCode } from './errors.js';
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
  ExitStatus,
  ResolvedTerminalSpec,
  TerminalId,
  TerminalOutput,
  TerminalSpec,
} from './terminal-spec.js';
