import { resolve as resolvePath } from 'node:path';
import { CommandLauncher, checkDirectory } from './command-launcher.js';
import { TermhostError } from './errors.js';
import { decide } from './gate-decision.js';
import { type HostSettings, hostSettings, type ProcessTerminalHostOptions } from './host-options.js';
import type { GateVerb } from './ports/gate.js';
import type { SpawnedProcess } from './ports/process-spawner.js';
import type { OutputOptions, TerminalHost, WaitOptions } from './ports/terminal-host.js';
import { ProcessTerminal } from './process-terminal.js';
import { isNonNegativeInteger, SpecResolver } from './spec-resolver.js';
import { TerminalEvents } from './terminal-events.js';
import { TerminalRegistry } from './terminal-registry.js';
import type {
  CallerContext,
  ExitStatus,
  ResolvedTerminalSpec,
  TerminalId,
  TerminalOutput,
  TerminalSpec,
} from './terminal-spec.js';

export {
  DEFAULT_KILL_GRACE_MS,
  DEFAULT_MAX_OUTPUT_BYTES,
  DEFAULT_MAX_TERMINALS,
  DEFAULT_SHELL_PREFIX,
  type ProcessTerminalHostOptions,
} from './host-options.js';
export { MAX_ARGUMENT_BYTES, MAX_CWD_BYTES, MAX_REQUEST_BYTES, POSIX_ENV_NAME } from './spec-resolver.js';

/**
 * {@link TerminalHost} over local processes: one process group per terminal,
 * stdin `/dev/null`, stdout and stderr one pipe (in the order written) into a
 * bounded tail, a non-interactive environment (`NON_INTERACTIVE_ENV`).
 *
 * Its parts, one job each: `SpecResolver` (checks and resolves the spec),
 * `decide` (the gate), `TerminalRegistry` (ids, slots, lookup, reclaim,
 * release), `CommandLauncher` (environment, spawn, its errors),
 * `ProcessTerminal` (output and exit of one command), `TerminalEvents`
 * (the observer); this class is the sequence of each verb.
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
  readonly #settings: HostSettings;
  readonly #specs: SpecResolver;
  readonly #terminals: TerminalRegistry;
  readonly #launcher: CommandLauncher;
  readonly #events: TerminalEvents;
  readonly #pendingCreates = new Set<Promise<unknown>>();
  #closed = false;

  constructor(options: ProcessTerminalHostOptions) {
    this.#settings = hostSettings(options);
    this.#specs = new SpecResolver(this.#settings);
    this.#terminals = new TerminalRegistry(this.#settings);
    this.#launcher = new CommandLauncher(this.#settings.spawner, this.#settings.inheritEnv);
    this.#events = new TerminalEvents(this.#settings.observer, this.#settings.onError);
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
    await this.#terminals.release(terminal);
  }

  async closeAll(scope?: string): Promise<void> {
    if (scope === undefined) this.#closed = true;
    // Creations under way register (or, once closed, tear down) their terminal first.
    if (scope === undefined) await Promise.all([...this.#pendingCreates]);
    const doomed = this.#terminals.inScope(scope);
    await Promise.all(doomed.map((terminal) => this.#terminals.release(terminal)));
  }

  /** The create sequence: resolve, gate, slot, cwd, spawn, register. */
  async #create(spec: TerminalSpec, caller: CallerContext): Promise<TerminalId> {
    this.#assertOpen();
    const resolved = this.#specs.resolve(spec);
    const id = this.#terminals.newId();
    const decision = await decide(this.#settings.gate, 'create', id, resolved, caller);
    const cwd = decision.cwd === undefined ? resolved.cwd : resolvePath(resolved.cwd, decision.cwd);
    const judged: ResolvedTerminalSpec =
      cwd === resolved.cwd ? resolved : Object.freeze({ ...resolved, cwd });

    this.#assertOpen();
    const slot = await this.#terminals.reserve(caller, judged.outputByteLimit, () => this.#assertOpen());
    let child: SpawnedProcess;
    try {
      await checkDirectory(cwd);
      child = await this.#launcher.spawn(judged, judged.env, decision.sandbox, id);
    } catch (error) {
      this.#terminals.unreserve(slot);
      throw error;
    }

    const terminal = new ProcessTerminal({
      id,
      spec: judged,
      caller,
      process: child,
      killGraceMs: this.#settings.killGraceMs,
      digestOutput: this.#settings.digestOutput,
      onExited: (t, report) => this.#events.exited({ terminalId: t.id, caller: t.caller, ...report }),
      onError: this.#settings.onError,
    });
    this.#terminals.add(terminal);
    this.#events.spawned({ terminalId: id, pid: child.pid, caller });
    // Spawned: the caller learns the id even if the host closed meanwhile. A
    // concurrent `closeAll` waits for this creation and then kills the
    // terminal, so the answer says what happened (it ran) and nothing outlives the host.
    return id;
  }

  #assertOpen(): void {
    if (this.#closed) throw new TermhostError('HOST_CLOSED', 'The terminal host is closed');
  }

  /** Looks the terminal up, consults the gate, and looks it up again (it may have been released meanwhile). */
  async #authorized(verb: GateVerb, id: TerminalId, caller: CallerContext): Promise<ProcessTerminal> {
    const terminal = this.#terminals.lookup(id, caller);
    await decide(this.#settings.gate, verb, id, terminal.spec, caller);
    const current = this.#terminals.lookup(id, caller);
    this.#terminals.touch(current);
    return current;
  }
}
