import type { Readable } from 'node:stream';
import type { SandboxProfile } from '../sandbox-profile.js';

/** One process to start, fully resolved: nothing is inherited implicitly. */
export interface SpawnRequest {
  /** `argv[0]` is the program (looked up on `env.PATH` when it has no slash); the rest are its arguments. */
  readonly argv: readonly string[];
  /** Absolute, existing directory. */
  readonly cwd: string;
  /** The child's complete environment. */
  readonly env: Readonly<Record<string, string>>;
  /**
   * Confine the process to this profile. A spawner that cannot enforce it
   * must reject with `code: 'ESANDBOX'` and start nothing: a profile is
   * never silently ignored.
   */
  readonly sandbox?: SandboxProfile;
  /**
   * Open descriptors the child gets as fd 3, 4, … (a compiled syscall filter
   * for bwrap's `--seccomp 3`, say). The spawner neither reads nor closes
   * them; the caller closes its copies once `spawn` settled. Default: none.
   */
  readonly extraFds?: readonly number[];
  /**
   * The terminal this process is the command of, for what the spawner
   * records or hands out per terminal (the sandbox's proxy credential,
   * say). Default: none, and the spawner makes up an id of its own.
   */
  readonly terminalId?: string;
}

/** How the group leader (the spawned process itself) ended. */
export interface ProcessExit {
  /** Integer ≥ 0, or `null` when the process died of a signal. */
  readonly exitCode: number | null;
  /** Signal name such as `"SIGTERM"`, or `null`. */
  readonly signal: string | null;
}

/**
 * A started process that leads its own process group.
 *
 * The group outlives the leader while background jobs of the command still
 * run, so group operations stay meaningful after `exited` resolved.
 */
export interface SpawnedProcess {
  /** The leader's pid, which is also the group id. Always > 0. */
  readonly pid: number;
  /**
   * The command's stdout and stderr: one pipe, both descriptors (1 and 2)
   * of the process refer to its write side, as they would to a terminal, so
   * bytes arrive in the order they were written, whichever descriptor wrote
   * them. Paused until read. Ends when every process holding the write side
   * closed it.
   */
  readonly output: Readable;
  /** Resolves once with how the leader ended. Never rejects. */
  readonly exited: Promise<ProcessExit>;
  /**
   * Sends `signal` to every process of the group. Returns `false` (and sends
   * nothing) once the group is known to be gone; a gone group is never
   * signalled again, so a recycled group id cannot be hit.
   */
  signalGroup(signal: 'SIGTERM' | 'SIGKILL'): boolean;
  /** True while any process of the group runs. Zombies do not count as running. */
  groupAlive(): boolean;
  /**
   * True when nothing the process started can outlive it (it is the init of
   * a pid namespace, say): then no process counts as left after the
   * leader's exit, even while the group is still being torn down.
   */
  readonly diesWithLeader?: boolean;
}

/**
 * Starts processes for the terminal host.
 *
 * Contract for every implementation:
 * - the process leads a new session and process group and has no controlling terminal;
 * - stdin is `/dev/null`; stdout and stderr are one pipe (`output`), as on a terminal;
 * - a request with a `sandbox` it cannot enforce is rejected (`ESANDBOX`);
 * - `spawn` resolves once the program is executing, and rejects (never throws
 *   synchronously) with an error whose `code` is the errno name (`ENOENT`,
 *   `EACCES`, …) when it could not be started. A rejected spawn leaves no
 *   process and no open descriptor behind.
 */
export interface ProcessSpawner {
  spawn(request: SpawnRequest): Promise<SpawnedProcess>;
  /**
   * Optional. Once it resolves, one later `spawn` call starts its process
   * synchronously, before that call returns (one call per `prepare`). A
   * wrapper that must be in a given state exactly while the fork happens
   * (a cgroup it moved into, say) prepares first. Rejects when the next
   * spawn could not start anything.
   */
  prepare?(): Promise<void>;
}

export const PROCESS_SPAWNER: unique symbol = Symbol.for('termgate.ProcessSpawner');
