import type { Approver } from './ports/approver.js';

/** Opaque, unguessable handle for one terminal. Never a pid. */
export type TerminalId = string;

/**
 * What a caller asks the host to run.
 *
 * - Without `args`, `command` is a command **line**, run by the host's shell
 *   (bash without startup files by default).
 * - With `args`, `command` is a program and `args` its argv; no shell is involved.
 */
export interface TerminalSpec {
  readonly command: string;
  readonly args?: readonly string[];
  /** Working directory. Relative paths resolve against the host's default cwd. */
  readonly cwd?: string;
  /** Variables set on top of the inherited environment and the non-interactive defaults. */
  readonly env?: Readonly<Record<string, string>>;
  /** Bytes of output to retain (the newest ones). Clamped by the host ceiling. */
  readonly outputByteLimit?: number;
  /**
   * Milliseconds (an integer ≥ 1) after which the host kills the command
   * (exit status `timedOut: true`). Clamped by the host's own timeout when it has one.
   */
  readonly timeoutMs?: number;
}

/**
 * A spec after the host filled in its defaults: what the gate judges and
 * what is spawned, byte for byte.
 */
export interface ResolvedTerminalSpec {
  readonly command: string;
  /** `null` when `command` is a command line run by the shell. */
  readonly args: readonly string[] | null;
  /** Absolute working directory. */
  readonly cwd: string;
  /** Only the variables the caller set (the gate judges these names). */
  readonly env: Readonly<Record<string, string>>;
  /** Effective limit after clamping to the host ceiling. */
  readonly outputByteLimit: number;
  /** The argv actually exec'd: the shell invocation for command lines. */
  readonly argv: readonly string[];
  /** Effective timeout after clamping; absent when the command may run indefinitely. */
  readonly timeoutMs?: number;
}

/** How a command ended. */
export interface ExitStatus {
  /** Integer ≥ 0, or `null` when the process died of a signal. */
  readonly exitCode: number | null;
  /** Signal name such as `"SIGKILL"`, or `null`. */
  readonly signal: string | null;
  /** True when the host killed the command because its timeout passed. */
  readonly timedOut: boolean;
  /**
   * Present (and true) when processes the command started were still
   * running when it counted as exited: background jobs of its process group
   * and, where the host has a cgroup per terminal, anything that left the
   * session (`setsid`, detached children). `kill`, `release` and shutdown end them.
   */
  readonly processesLeft?: true;
}

/** A snapshot of a terminal's retained output. */
export interface TerminalOutput {
  /** UTF-8 text of the retained bytes; invalid bytes are replaced with U+FFFD. */
  readonly output: string;
  /** True once any byte has been dropped to stay within the limit. Stays true. */
  readonly truncated: boolean;
  /** Every byte the command ever wrote (stdout + stderr). Monotonic. */
  readonly totalBytes: number;
  /** Bytes the retention limit dropped from the head (plus at most three to start on a character). */
  readonly droppedBytes: number;
  /**
   * Where `output` starts in the whole stream, in bytes: `droppedBytes`, or
   * later when a read asked for output from a given byte.
   */
  readonly offset: number;
  /** `null` while the command runs. */
  readonly exitStatus: ExitStatus | null;
}

/**
 * An authenticated caller, as the transport that checked its credentials
 * names it (for a bearer token: the token's `sub` and `iss`). A plain value:
 * the host compares it, it never checks it.
 */
export interface CallerPrincipal {
  readonly subject: string;
  readonly issuer: string;
}

/** Who is calling, as far as the protocol adapter knows. Opaque to the host except `scope` and `principal`. */
export interface CallerContext {
  /**
   * Terminals are visible only to callers with the same scope. ACP uses one
   * scope per session; MCP uses the default (empty) scope.
   */
  readonly scope?: string;
  /**
   * Who the caller is authenticated as; absent: nobody is (stdio, ACP). A
   * terminal belongs to the principal that created it: a caller with another
   * principal (or none) cannot see it, exactly as if the id were unknown.
   * The per-principal limits count the terminals of one principal (absent:
   * the anonymous principal, one for all such callers).
   */
  readonly principal?: CallerPrincipal;
  readonly clientName?: string;
  readonly clientVersion?: string;
  /** Protocol and revision, e.g. `"mcp/2026-07-28"` or `"acp/1"`. */
  readonly protocol?: string;
  /**
   * Who to ask when the gate's decision is `ask`, for this request. Absent:
   * nobody can be asked, and an `ask` is refused.
   */
  readonly approver?: Approver;
}
