import { randomUUID } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { resolve as resolvePath } from 'node:path';
import { baseEnvironment, commandEnvironment } from './environment.js';
import { TermhostError } from './errors.js';
import type { Gate, GateDecision, GateVerb } from './ports/gate.js';
import type { ProcessSpawner, SpawnedProcess } from './ports/process-spawner.js';
import type { OutputOptions, TerminalHost, WaitOptions } from './ports/terminal-host.js';
import type { TerminalObserver } from './ports/terminal-observer.js';
import { ProcessTerminal, type TerminalExitReport } from './process-terminal.js';
import type { SandboxProfile } from './sandbox-profile.js';
import type {
  CallerContext,
  ExitStatus,
  ResolvedTerminalSpec,
  TerminalId,
  TerminalOutput,
  TerminalSpec,
} from './terminal-spec.js';

/** bash without startup files: the shell the policy models. */
export const DEFAULT_SHELL_PREFIX: readonly string[] = Object.freeze(['bash', '--noprofile', '--norc', '-c']);
/** 1 MiB. */
export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;
export const DEFAULT_MAX_TERMINALS = 64;
export const DEFAULT_KILL_GRACE_MS = 2000;
/**
 * Request size limits, checked before the gate (so before any audit record):
 * one argument (the command, a command line, each arg) at most the kernel's
 * `MAX_ARG_STRLEN` minus its NUL; a cwd at most `PATH_MAX` minus its NUL;
 * command, args and env together at most 1 MiB. Larger requests could not
 * be exec'd anyway.
 */
export const MAX_ARGUMENT_BYTES = 128 * 1024 - 1;
export const MAX_CWD_BYTES = 4095;
export const MAX_REQUEST_BYTES = 1024 * 1024;

/** A POSIX (portable) environment variable name; anything else is refused before the gate sees it. */
export const POSIX_ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

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

/**
 * {@link TerminalHost} over local processes: one process group per terminal,
 * stdin `/dev/null`, stdout and stderr one pipe (in the order written) into a
 * bounded tail, a non-interactive environment (`NON_INTERACTIVE_ENV`).
 *
 * Decisions beyond the port's contract:
 * - `create` consults the gate before any check that touches the system, then
 *   enforces `maxTerminals`, checks the cwd and spawns; it resolves once the
 *   program runs. A program that cannot be started rejects `create`
 *   (`PROGRAM_NOT_FOUND`, `PERMISSION_DENIED`, `SPAWN_FAILED`); a command line
 *   naming an unknown command is not such a failure: the shell reports it
 *   with exit code 127.
 * - A terminal counts as exited when its leader exited and its output ended,
 *   or `EXIT_DRAIN_GRACE_MS` after the leader exited. Bytes from background
 *   jobs that arrive later are still retained and counted in `output`.
 * - `kill` resolves once the group is gone and the terminal counts as exited,
 *   so the next `output` shows the exit status: within the kill grace when
 *   the command ends on SIGTERM, after SIGKILL otherwise. If the group
 *   survives SIGKILL, it resolves once the kill gives up (see `onError`).
 * - `onOutput` chunks are the host's own buffers, shared with the retained
 *   tail: listeners must not modify them (copy to keep them past the call).
 * - A wait pending when its terminal is released resolves with the exit
 *   status the release caused. Calls that reach the host after `release`
 *   started reject with `TERMINAL_NOT_FOUND`.
 * - After `closeAll()` without a scope the host is closed: `create` rejects
 *   with `HOST_CLOSED` unless its command was already spawned, in which case
 *   it resolves with the id and `closeAll` kills that terminal too.
 * - "The group" is what the spawner's `signalGroup`/`groupAlive` cover: the
 *   process group with a plain spawner, from which processes that start a
 *   new session (`setsid`, a double fork) escape; the process group and a
 *   cgroup with a cgroup spawner, from which they do not.
 * - An exit status has `processesLeft: true` when the group was still alive
 *   as the terminal counted as exited.
 */
export class ProcessTerminalHost implements TerminalHost {
  readonly #shellPrefix: readonly string[];
  readonly #cwd: string;
  readonly #argvEnv: Readonly<Record<string, string>>;
  readonly #lineEnv: Readonly<Record<string, string>>;
  readonly #maxOutputBytes: number;
  readonly #maxTerminals: number;
  readonly #reclaimExited: boolean;
  /** Counts verbs, to order terminals by their last use. */
  #uses = 0;
  readonly #killGraceMs: number;
  readonly #timeoutMs: number | undefined;
  readonly #digestOutput: boolean;
  readonly #gate: Gate;
  readonly #observer: TerminalObserver;
  readonly #spawner: ProcessSpawner;
  readonly #onError: (error: unknown, context: string) => void;
  readonly #terminals = new Map<TerminalId, ProcessTerminal>();
  /** Terminals being created or not yet fully released: what `maxTerminals` counts. */
  #slots = 0;
  readonly #pendingCreates = new Set<Promise<unknown>>();
  /** Releases under way, so that `closeAll` also waits for them. */
  readonly #releasing = new Map<ProcessTerminal, Promise<void>>();
  #closed = false;

  constructor(options: ProcessTerminalHostOptions) {
    this.#shellPrefix = Object.freeze([...(options.shellPrefix ?? DEFAULT_SHELL_PREFIX)]);
    this.#cwd = resolvePath(options.cwd ?? process.cwd());
    const inherited = options.inheritEnv ?? process.env;
    this.#argvEnv = baseEnvironment(inherited, false);
    this.#lineEnv = baseEnvironment(inherited, true);
    this.#maxOutputBytes = nonNegativeInteger(
      options.maxOutputBytes,
      DEFAULT_MAX_OUTPUT_BYTES,
      'maxOutputBytes',
    );
    this.#maxTerminals = nonNegativeInteger(options.maxTerminals, DEFAULT_MAX_TERMINALS, 'maxTerminals');
    this.#reclaimExited = options.reclaimExited ?? false;
    this.#killGraceMs = nonNegativeInteger(options.killGraceMs, DEFAULT_KILL_GRACE_MS, 'killGraceMs');
    if (options.timeoutMs !== undefined && !isPositiveInteger(options.timeoutMs)) {
      throw new TypeError('timeoutMs must be an integer ≥ 1');
    }
    this.#timeoutMs = options.timeoutMs;
    this.#digestOutput = options.digestOutput ?? false;
    this.#gate = required(options.gate, 'gate', 'decide');
    this.#observer = required(options.observer, 'observer', 'onSpawned');
    this.#spawner = required(options.spawner, 'spawner', 'spawn');
    this.#onError = options.onError ?? defaultOnError;
    if (this.#shellPrefix.length === 0) throw new TypeError('shellPrefix must not be empty');
  }

  create(spec: TerminalSpec, caller: CallerContext = {}): Promise<TerminalId> {
    const creation = this.#create(spec, caller);
    const tracked = creation.catch(() => {});
    this.#pendingCreates.add(tracked);
    void tracked.then(() => this.#pendingCreates.delete(tracked));
    return creation;
  }

  async output(
    id: TerminalId,
    caller: CallerContext = {},
    options: OutputOptions = {},
  ): Promise<TerminalOutput> {
    const { fromByte } = options;
    if (fromByte !== undefined && !isNonNegativeInteger(fromByte)) {
      throw new TermhostError('INVALID_SPEC', 'fromByte must be an integer ≥ 0');
    }
    const terminal = await this.#authorized('output', id, caller);
    return terminal.output(fromByte);
  }

  async waitForExit(
    id: TerminalId,
    options: WaitOptions = {},
    caller: CallerContext = {},
  ): Promise<ExitStatus> {
    const terminal = await this.#authorized('wait', id, caller);
    return terminal.wait(options);
  }

  async kill(id: TerminalId, caller: CallerContext = {}): Promise<void> {
    const terminal = await this.#authorized('kill', id, caller);
    await terminal.kill();
  }

  async release(id: TerminalId, caller: CallerContext = {}): Promise<void> {
    const terminal = await this.#authorized('release', id, caller);
    await this.#release(terminal);
  }

  async closeAll(scope?: string): Promise<void> {
    if (scope === undefined) this.#closed = true;
    // Creations under way register (or, once closed, tear down) their terminal first.
    if (scope === undefined) await Promise.all([...this.#pendingCreates]);
    const inScope = (t: ProcessTerminal): boolean => scope === undefined || t.scope === scope;
    const doomed = [...this.#terminals.values(), ...this.#releasing.keys()].filter(inScope);
    await Promise.all(doomed.map((terminal) => this.#release(terminal)));
  }

  async #create(spec: TerminalSpec, caller: CallerContext): Promise<TerminalId> {
    if (this.#closed) throw new TermhostError('HOST_CLOSED', 'The terminal host is closed');
    const resolved = this.#resolve(spec);
    const id = randomUUID();
    const decision = await this.#decide('create', id, resolved, caller);
    const cwd = decision.cwd === undefined ? resolved.cwd : resolvePath(resolved.cwd, decision.cwd);
    const judged: ResolvedTerminalSpec =
      cwd === resolved.cwd ? resolved : Object.freeze({ ...resolved, cwd });

    if (this.#closed) throw new TermhostError('HOST_CLOSED', 'The terminal host is closed');
    while (this.#slots >= this.#maxTerminals) {
      const reclaimable = this.#reclaimExited ? this.#leastRecentlyUsedExited(caller.scope ?? '') : undefined;
      if (reclaimable === undefined) throw this.#limitReached();
      await this.#release(reclaimable);
      if (this.#closed) throw new TermhostError('HOST_CLOSED', 'The terminal host is closed');
    }
    this.#slots++;
    let child: SpawnedProcess;
    try {
      await checkDirectory(cwd);
      child = await this.#spawn(judged, judged.env, decision.sandbox, id);
    } catch (error) {
      this.#slots--;
      throw error;
    }

    const terminal = new ProcessTerminal({
      id,
      spec: judged,
      caller,
      process: child,
      killGraceMs: this.#killGraceMs,
      digestOutput: this.#digestOutput,
      onExited: (t, report) => this.#exited(t, report),
      onError: this.#onError,
    });
    terminal.lastUsed = ++this.#uses;
    this.#terminals.set(id, terminal);
    this.#notify('onSpawned', () => this.#observer.onSpawned({ terminalId: id, pid: child.pid, caller }));
    // Spawned: the caller learns the id even if the host closed meanwhile. A
    // concurrent `closeAll` waits for this creation and then kills the
    // terminal, so the answer says what happened (it ran) and nothing outlives the host.
    return id;
  }

  async #spawn(
    spec: ResolvedTerminalSpec,
    requestedEnv: Readonly<Record<string, string>>,
    sandbox: SandboxProfile | undefined,
    terminalId: string,
  ): Promise<SpawnedProcess> {
    const line = spec.args === null;
    const env = commandEnvironment(line ? this.#lineEnv : this.#argvEnv, requestedEnv, line);
    const program = spec.argv[0]!;
    try {
      return await this.#spawner.spawn({
        argv: spec.argv,
        cwd: spec.cwd,
        env,
        terminalId,
        ...(sandbox !== undefined && { sandbox }),
      });
    } catch (error) {
      const errno = (error as NodeJS.ErrnoException | undefined)?.code;
      const details = { program, cwd: spec.cwd, errno: errno ?? null };
      if (errno === 'ENOENT') {
        throw new TermhostError(
          'PROGRAM_NOT_FOUND',
          `Program not found: ${program} (cwd ${spec.cwd})`,
          details,
        );
      }
      if (errno === 'ESANDBOX') {
        throw new TermhostError(
          'SPAWN_FAILED',
          `The sandbox could not confine ${program}, so it was not started: ${error instanceof Error ? error.message : String(error)}`,
          details,
        );
      }
      if (errno === 'EACCES') {
        throw new TermhostError(
          'PERMISSION_DENIED',
          `Permission denied executing ${program} (cwd ${spec.cwd})`,
          details,
        );
      }
      throw new TermhostError(
        'SPAWN_FAILED',
        `Could not start ${program} in ${spec.cwd}: ${error instanceof Error ? error.message : String(error)}`,
        details,
      );
    }
  }

  #resolve(spec: TerminalSpec): ResolvedTerminalSpec {
    const invalid = (message: string): TermhostError => new TermhostError('INVALID_SPEC', message);
    if (typeof spec !== 'object' || spec === null) throw invalid('The spec must be an object');
    const { command, args, cwd, env, outputByteLimit, timeoutMs } = spec;
    if (typeof command !== 'string' || command.length === 0)
      throw invalid('command must be a non-empty string');
    if (command.includes('\0')) throw invalid('command must not contain NUL');
    if (
      args !== undefined &&
      (!Array.isArray(args) || !args.every((a) => typeof a === 'string' && !a.includes('\0')))
    ) {
      throw invalid('args must be an array of strings without NUL');
    }
    if (cwd !== undefined && (typeof cwd !== 'string' || cwd.includes('\0'))) {
      throw invalid('cwd must be a string without NUL');
    }
    const ownEnv: Record<string, string> = {};
    if (env !== undefined) {
      if (typeof env !== 'object' || env === null) throw invalid('env must be an object of strings');
      for (const [name, value] of Object.entries(env)) {
        if (!POSIX_ENV_NAME.test(name)) {
          throw invalid(
            `env name ${JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}…` : name)} is not a valid variable name: a name is a letter or _ followed by letters, digits or _`,
          );
        }
        if (typeof value !== 'string' || value.includes('\0'))
          throw invalid(`env ${name} must be a string without NUL`);
        ownEnv[name] = value;
      }
    }
    checkSizes(command, args, cwd, ownEnv);
    if (outputByteLimit !== undefined && !isNonNegativeInteger(outputByteLimit)) {
      throw invalid('outputByteLimit must be an integer ≥ 0');
    }
    if (timeoutMs !== undefined && !isPositiveInteger(timeoutMs))
      throw invalid('timeoutMs must be an integer ≥ 1');

    const argsCopy = args === undefined ? null : Object.freeze([...args]);
    const limit = Math.min(outputByteLimit ?? this.#maxOutputBytes, this.#maxOutputBytes);
    const timeout =
      timeoutMs === undefined
        ? this.#timeoutMs
        : Math.min(timeoutMs, this.#timeoutMs ?? Number.POSITIVE_INFINITY);
    return Object.freeze({
      command,
      args: argsCopy,
      cwd: resolvePath(this.#cwd, cwd ?? '.'),
      env: Object.freeze(ownEnv),
      outputByteLimit: limit,
      argv: Object.freeze(argsCopy === null ? [...this.#shellPrefix, command] : [command, ...argsCopy]),
      ...(timeout === undefined ? {} : { timeoutMs: timeout }),
    });
  }

  /** Looks the terminal up, consults the gate, and looks it up again (it may have been released meanwhile). */
  async #authorized(verb: GateVerb, id: TerminalId, caller: CallerContext): Promise<ProcessTerminal> {
    const terminal = this.#lookup(id, caller);
    await this.#decide(verb, id, terminal.spec, caller);
    const current = this.#lookup(id, caller);
    current.lastUsed = ++this.#uses;
    return current;
  }

  /** The exited terminal of `scope` to reclaim first (see `reclaimExited`), if any. */
  #leastRecentlyUsedExited(scope: string): ProcessTerminal | undefined {
    const exited = [...this.#terminals.values()].filter((t) => t.scope === scope && t.exitStatus !== null);
    if (exited.length === 0) return undefined;
    exited.sort((a, b) => a.lastUsed - b.lastUsed);
    // Usually the least recently used one's group is gone: one probe. Otherwise the first whose group is.
    return exited.find((terminal) => !terminal.groupAlive()) ?? exited[0];
  }

  #limitReached(): TermhostError {
    const running = [...this.#terminals.values()].filter((t) => t.exitStatus === null).length;
    const rule = this.#reclaimExited
      ? `none of them has exited (${running} running); exited terminals are reclaimed automatically, so stop one with kill or release it`
      : 'release one first';
    return new TermhostError(
      'TERMINAL_LIMIT_REACHED',
      `At most ${this.#maxTerminals} terminals may exist at once; ${rule}`,
      { maxTerminals: this.#maxTerminals, running, reclaimExited: this.#reclaimExited },
    );
  }

  #lookup(id: TerminalId, caller: CallerContext): ProcessTerminal {
    const terminal = typeof id === 'string' ? this.#terminals.get(id) : undefined;
    if (terminal === undefined || terminal.scope !== (caller.scope ?? '')) {
      throw new TermhostError('TERMINAL_NOT_FOUND', `No terminal ${String(id)}`, { terminalId: id });
    }
    return terminal;
  }

  /** Resolves with an allowing decision; anything else (refusal, throw, rejection, junk) is GATE_DENIED. */
  async #decide(
    verb: GateVerb,
    terminalId: TerminalId,
    spec: ResolvedTerminalSpec,
    caller: CallerContext,
  ): Promise<Extract<GateDecision, { allow: true }>> {
    let decision: GateDecision;
    try {
      decision = await this.#gate.decide({ verb, terminalId, spec, caller });
    } catch (error) {
      const reason = `the gate failed: ${error instanceof Error ? error.message : String(error)}`;
      throw new TermhostError('GATE_DENIED', `${verb} denied: ${reason}`, { verb, reason, ruleIds: [] });
    }
    if (typeof decision === 'object' && decision !== null && decision.allow === true) return decision;
    const reason =
      typeof decision === 'object' && decision !== null && typeof decision.reason === 'string'
        ? decision.reason
        : 'the gate returned no decision';
    const ruleIds =
      typeof decision === 'object' && decision !== null && !decision.allow && Array.isArray(decision.ruleIds)
        ? [...decision.ruleIds]
        : [];
    const approval =
      typeof decision === 'object' && decision !== null && !decision.allow ? decision.approval : undefined;
    throw new TermhostError('GATE_DENIED', `${verb} denied: ${reason}`, {
      verb,
      reason,
      ruleIds,
      ...(approval !== undefined && { approval }),
    });
  }

  /** Forgets the terminal at once, then closes it; concurrent calls share one close. */
  #release(terminal: ProcessTerminal): Promise<void> {
    const under = this.#releasing.get(terminal);
    if (under !== undefined) return under;
    if (this.#terminals.get(terminal.id) !== terminal) return Promise.resolve();
    this.#terminals.delete(terminal.id);
    const closing = terminal.close().finally(() => {
      this.#slots--;
      this.#releasing.delete(terminal);
    });
    this.#releasing.set(terminal, closing);
    return closing;
  }

  #exited(terminal: ProcessTerminal, report: TerminalExitReport): void {
    this.#notify('onExited', () =>
      this.#observer.onExited({ terminalId: terminal.id, caller: terminal.caller, ...report }),
    );
  }

  #notify(event: string, call: () => void): void {
    try {
      call();
    } catch (error) {
      this.#onError(error, `TerminalObserver.${event}`);
    }
  }
}

/** Refuses a request over the size limits (INVALID_SPEC), naming the field and its size. */
function checkSizes(
  command: string,
  args: readonly string[] | undefined,
  cwd: string | undefined,
  env: Readonly<Record<string, string>>,
): void {
  const tooLong = (what: string, bytes: number, limit: number): TermhostError =>
    new TermhostError('INVALID_SPEC', `${what} is ${bytes} bytes; the limit is ${limit}`, { bytes, limit });
  let total = 0;
  for (const [what, value] of [
    ['command', command] as const,
    ...(args ?? []).map((a, i) => [`args[${i}]`, a] as const),
  ]) {
    const bytes = Buffer.byteLength(value);
    if (bytes > MAX_ARGUMENT_BYTES) throw tooLong(what, bytes, MAX_ARGUMENT_BYTES);
    total += bytes + 1;
  }
  if (cwd !== undefined && Buffer.byteLength(cwd) > MAX_CWD_BYTES) {
    throw tooLong('cwd', Buffer.byteLength(cwd), MAX_CWD_BYTES);
  }
  for (const [name, value] of Object.entries(env)) {
    const bytes = Buffer.byteLength(name) + Buffer.byteLength(value) + 2;
    if (bytes > MAX_ARGUMENT_BYTES) throw tooLong(`env ${name}`, bytes, MAX_ARGUMENT_BYTES);
    total += bytes;
  }
  if (total > MAX_REQUEST_BYTES)
    throw tooLong('the request (command, args and env)', total, MAX_REQUEST_BYTES);
}

async function checkDirectory(cwd: string): Promise<void> {
  let isDirectory: boolean;
  try {
    isDirectory = (await stat(cwd)).isDirectory();
  } catch (error) {
    const errno = (error as NodeJS.ErrnoException).code;
    if (errno === 'ENOENT' || errno === 'ENOTDIR') {
      throw new TermhostError('CWD_NOT_FOUND', `Working directory not found: ${cwd}`, { cwd });
    }
    if (errno === 'EACCES') {
      throw new TermhostError('PERMISSION_DENIED', `Working directory not accessible: ${cwd}`, { cwd });
    }
    throw new TermhostError('SPAWN_FAILED', `Cannot use working directory ${cwd}: ${String(error)}`, { cwd });
  }
  if (!isDirectory)
    throw new TermhostError('CWD_NOT_DIRECTORY', `Working directory is not a directory: ${cwd}`, { cwd });
}

function isNonNegativeInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function isPositiveInteger(value: unknown): value is number {
  return isNonNegativeInteger(value) && value > 0;
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
