/**
 * Public API of @termgate/termhost: terminals as processes, bytes, limits and
 * exit status. No protocol types live here. Named exports only.
 */
export { TermhostError, type TermhostErrorCode } from './errors.js';
export { GATE, type Gate, type GateDecision, type GateRequest, type GateVerb } from './ports/gate.js';
export { TERMINAL_HOST, type TerminalHost, type WaitOptions } from './ports/terminal-host.js';
export {
  type ExitedEvent,
  type SpawnedEvent,
  TERMINAL_OBSERVER,
  type TerminalObserver,
} from './ports/terminal-observer.js';
export type {
  CallerContext,
  ExitStatus,
  ResolvedTerminalSpec,
  TerminalId,
  TerminalOutput,
  TerminalSpec,
} from './terminal-spec.js';
