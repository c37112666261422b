import { resolve as resolvePath } from 'node:path';
import type { Gate } from './ports/gate.js';
import type { ProcessSpawner } from './ports/process-spawner.js';
import type { TerminalObserver } from './ports/terminal-observer.js';
import { isNonNegativeInteger, isPositiveInteger } from './spec-resolver.js';

/** bash without startup files: the shell the policy models. */
export const DEFAULT_SHELL_PREFIX: readonly string[] = Object.freeze(['bash', '--noprofile', '--norc', '-c']);
/** 1 MiB. */
export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;
export const DEFAULT_MAX_TERMINALS = 64;
export const DEFAULT_KILL_GRACE_MS = 2000;
/**
 * Construction options of {@link ProcessTerminalHost}. The gate, the spawner
 * and the observer are required: the host has no defaults for what decides,
 * starts and records its commands, so a caller cannot forget the gate.
 */
export interface ProcessTerminalHostOptions {
  /**
   * Argv that runs a command line, which is appended as the last argument.
   * Default {@link DEFAULT_SHELL_PREFIX}.
   */
  readonly shellPrefix?: readonly string[];
  /** Directory that relative and absent `cwd`s resolve against. Default: `process.cwd()` at construction. */
  readonly cwd?: string;
  /**
   * The environment commands start from, copied at construction. Default
   * `process.env`; the composition root passes a policy-filtered one.
   */
  readonly inheritEnv?: Readonly<Record<string, string | undefined>>;
  /**
   * Ceiling on retained output bytes per terminal; clamps a request's
   * `outputByteLimit` and is the limit when the request sets none.
   * Default {@link DEFAULT_MAX_OUTPUT_BYTES}.
   */
  readonly maxOutputBytes?: number;
  /**
   * Terminals that may exist at once (created and not yet released, whether
   * running or exited). Bounds memory at about `maxTerminals × maxOutputBytes`.
   * Default {@link DEFAULT_MAX_TERMINALS}.
   */
  readonly maxTerminals?: number;
  /**
   * Terminals one principal (`CallerContext.principal`; callers without one
   * are one anonymous principal) may have at once, within `maxTerminals`.
   * Default: `maxTerminals` (no ceiling of its own).
   */
  readonly maxTerminalsPerPrincipal?: number;
  /**
   * Ceiling on the output one principal's terminals may retain together:
   * each terminal holds its `outputByteLimit` from create to release, and a
   * create that would take a principal past this is refused
   * (`TERMINAL_LIMIT_REACHED`, after reclaiming as `reclaimExited` says).
   * Default: none beyond `maxTerminalsPerPrincipal × maxOutputBytes`.
   */
  readonly maxOutputBytesPerPrincipal?: number;
  /**
   * When `maxTerminals` is reached, `create` releases an exited terminal of
   * the caller's scope to make room instead of refusing: one whose process
   * group is gone before one whose background jobs still run (they are
   * killed), and among those the least recently used (created, read, waited
   * on or killed). Only when every terminal still runs is the creation
   * refused. Default `false`: exited terminals hold their slot until released.
   */
  readonly reclaimExited?: boolean;
  /** Between SIGTERM and SIGKILL. Default {@link DEFAULT_KILL_GRACE_MS}. */
  readonly killGraceMs?: number;
  /**
   * Kill every command after this many milliseconds, an integer ≥ 1 (exit
   * status `timedOut: true`); also the ceiling of a request's `timeoutMs`.
   * Default: no timeout.
   */
  readonly timeoutMs?: number;
  /** Compute a sha256 of each command's output for `TerminalObserver.onExited`. Default `false`. */
  readonly digestOutput?: boolean;
  /** Decides every verb before it acts; anything but an allowing decision refuses it. */
  readonly gate: Gate;
  /** Learns of every spawn and exit. */
  readonly observer: TerminalObserver;
  /** Starts each command in a process group of its own (see the port's contract). */
  readonly spawner: ProcessSpawner;
  /**
   * Receives errors that must not reach a caller: a throwing observer or
   * `onOutput` listener, a group that survives SIGKILL. Default: a process warning.
   */
  readonly onError?: (error: unknown, context: string) => void;
}

/** The options, checked, each absent one its default: what the host's parts are built from. */
export interface HostSettings {
  readonly shellPrefix: readonly string[];
  readonly cwd: string;
  readonly inheritEnv: Readonly<Record<string, string | undefined>>;
  readonly maxOutputBytes: number;
  readonly maxTerminals: number;
  readonly maxTerminalsPerPrincipal: number;
  readonly maxOutputBytesPerPrincipal: number | undefined;
  readonly reclaimExited: boolean;
  readonly killGraceMs: number;
  readonly timeoutMs: number | undefined;
  readonly digestOutput: boolean;
  readonly gate: Gate;
  readonly observer: TerminalObserver;
  readonly spawner: ProcessSpawner;
  readonly onError: (error: unknown, context: string) => void;
}

/** Checks `options` (a TypeError names the first bad one) and fills in the defaults. */
export function hostSettings(options: ProcessTerminalHostOptions): HostSettings {
  const shellPrefix = Object.freeze([...(options.shellPrefix ?? DEFAULT_SHELL_PREFIX)]);
  const cwd = resolvePath(options.cwd ?? process.cwd());
  const inheritEnv = options.inheritEnv ?? process.env;
  const maxOutputBytes = nonNegativeInteger(
    options.maxOutputBytes,
    DEFAULT_MAX_OUTPUT_BYTES,
    'maxOutputBytes',
  );
  const maxTerminals = nonNegativeInteger(options.maxTerminals, DEFAULT_MAX_TERMINALS, 'maxTerminals');
  const maxTerminalsPerPrincipal = nonNegativeInteger(
    options.maxTerminalsPerPrincipal,
    maxTerminals,
    'maxTerminalsPerPrincipal',
  );
  const maxOutputBytesPerPrincipal =
    options.maxOutputBytesPerPrincipal === undefined
      ? undefined
      : nonNegativeInteger(options.maxOutputBytesPerPrincipal, 0, 'maxOutputBytesPerPrincipal');
  const reclaimExited = options.reclaimExited ?? false;
  const killGraceMs = nonNegativeInteger(options.killGraceMs, DEFAULT_KILL_GRACE_MS, 'killGraceMs');
  if (options.timeoutMs !== undefined && !isPositiveInteger(options.timeoutMs)) {
    throw new TypeError('timeoutMs must be an integer ≥ 1');
  }
  const timeoutMs = options.timeoutMs;
  const digestOutput = options.digestOutput ?? false;
  const gate = required(options.gate, 'gate', 'decide');
  const observer = required(options.observer, 'observer', 'onSpawned');
  const spawner = required(options.spawner, 'spawner', 'spawn');
  const onError = options.onError ?? defaultOnError;
  if (shellPrefix.length === 0) throw new TypeError('shellPrefix must not be empty');
  return {
    shellPrefix,
    cwd,
    inheritEnv,
    maxOutputBytes,
    maxTerminals,
    maxTerminalsPerPrincipal,
    maxOutputBytesPerPrincipal,
    reclaimExited,
    killGraceMs,
    timeoutMs,
    digestOutput,
    gate,
    observer,
    spawner,
    onError,
  };
}

function nonNegativeInteger(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!isNonNegativeInteger(value)) throw new TypeError(`${name} must be an integer ≥ 0`);
  return value;
}

/** The port `name`, checked at construction: a JavaScript caller cannot leave it out either. */
function required<T extends object>(port: T | undefined, name: string, method: string): T {
  if (
    typeof port !== 'object' ||
    port === null ||
    typeof (port as Record<string, unknown>)[method] !== 'function'
  ) {
    throw new TypeError(`${name} is required: the terminal host has no default ${name}`);
  }
  return port;
}

function defaultOnError(error: unknown, context: string): void {
  process.emitWarning(
    `${context}: ${error instanceof Error ? error.message : String(error)}`,
    'TermhostWarning',
  );
}
