import type { Verdict } from '../decision.js';

/** Where something is defined in the policy file (1-based). */
export interface SourcePosition {
  readonly line: number;
  readonly column: number;
}

/**
 * One rule. Its matchers are AND-ed; the alternatives inside one matcher are
 * OR-ed. A rule matches one simple command at a time.
 */
export interface PolicyRule {
  readonly id: string;
  readonly decision: Verdict;
  readonly reason?: string;
  /** Basenames, or absolute paths that argv[0] must equal exactly. */
  readonly program?: readonly string[];
  /** Alternatives; each is a token-exact prefix of argv after argv[0]. */
  readonly argvPrefix?: readonly (readonly string[])[];
  readonly argvContains?: readonly string[];
  /** Whole-command globs over the normalised command. */
  readonly glob?: readonly string[];
  /** Whole-command regexes (source text; compiled anchored, `u` flag). */
  readonly regex?: readonly string[];
  /** Absolute, symlink-resolved directories. */
  readonly cwd?: readonly string[];
  /** `cwd` as the rule's examples see it: `${SERVER_CWD}` is `EXAMPLE_WORKSPACE` there. */
  readonly exampleCwd?: readonly string[];
  /** Path globs (picomatch) over the paths the command's arguments name, as written (placeholders expanded at match time). */
  readonly path?: readonly string[];
  /** Example lines the rule must match; checked when an engine is created. */
  readonly match?: readonly string[];
  /** Example lines the rule must not match; checked when an engine is created. */
  readonly notMatch?: readonly string[];
  readonly position: SourcePosition;
}

export interface PolicyLimits {
  readonly maxTerminals?: number;
  readonly maxOutputBytes?: number;
  /** Ceiling of an MCP tool result's character budget. */
  readonly maxOutputChars?: number;
  readonly timeoutSeconds?: number;
  /** Sandbox only: processes (threads included) one terminal may run at once. */
  readonly processes?: number;
  /** Sandbox only: the data segment (heap and private mappings) one process may use, in MiB. */
  readonly memoryMiB?: number;
  /** Sandbox only: the size of a terminal's private /tmp (a tmpfs), in MiB. */
  readonly tmpMiB?: number;
  /** Sandbox only, with a cgroup: the memory of all terminals of the server together, in MiB. */
  readonly totalMemoryMiB?: number;
}

export interface EnvPolicy {
  /** Globs of server variable names a command inherits. */
  readonly inherit: readonly string[];
  /** Globs of names a client may set. */
  readonly allowClientSet: readonly string[];
  /** Globs of names nobody may set (the built-in floor is added to these). */
  readonly deny: readonly string[];
  /**
   * Globs of the names a line may assign (`NAME=value cmd`, `export`,
   * `env NAME=…`, `read NAME`, …); absent, any name deny does not forbid.
   */
  readonly allowInline?: readonly string[];
}

/** One `writes.allow`/`writes.deny` pattern. */
export interface WritePattern {
  /** `writes.deny[2]`: the pseudo rule id decisions name. */
  readonly id: string;
  /** As written in the file. */
  readonly pattern: string;
  /**
   * Compiled forms: the pattern with placeholders expanded and, when its
   * literal directory prefix exists, the same with that prefix realpath'd.
   */
  readonly matchers: readonly RegExp[];
  readonly position: SourcePosition;
}

/** What output redirections may write. */
export interface WritesPolicy {
  /** For a write no pattern matches. */
  readonly default: Verdict;
  readonly allow: readonly WritePattern[];
  readonly deny: readonly WritePattern[];
}

/** An embedded example that `policy test` checks. */
export interface PolicyTest {
  readonly command: string;
  readonly args: readonly string[] | null;
  /** Absolute; defaults to the first cwd root, else the policy file's directory. */
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  readonly expect: Verdict;
  readonly rule?: string;
  readonly position: SourcePosition;
}

/**
 * The `sandbox` section, resolved: absolute paths, defaults filled in.
 * `mode: off` (also without the section) runs commands unconfined.
 */
export interface SandboxPolicy {
  readonly mode: 'required' | 'off';
  /**
   * The confinement tier (docs/SANDBOX-TIERS.md): `auto` the strongest that
   * works here, namespaces before landlock. Absent (a policy built by hand): `auto`.
   */
  readonly tier?: 'auto' | 'namespaces' | 'landlock';
  readonly writable: readonly string[];
  readonly readOnly: readonly string[];
  readonly hidden: readonly string[];
  readonly protectGit: boolean;
  readonly privateTmp: boolean;
  readonly network: 'none' | 'all' | { readonly allow: readonly string[] };
  /** The unprivileged user commands run as when the server is root; `null`: termgate-sandbox. */
  readonly user?: string | null;
  /**
   * The allowlisted view: these directories (HOME, `/root`, `/run`,
   * `/var/run` by default) appear with only what `readable`, `writable` and
   * `unixSockets` name inside them. Absolute, resolved. Absent (a profile
   * built by hand): none.
   */
  readonly allowlistedTrees?: readonly string[];
  /** Paths inside the allowlisted trees shown read-only. Absolute, resolved. */
  readonly readable?: readonly string[];
  /** Host Unix sockets a command may connect to, by path; every other listening host socket is covered. */
  readonly unixSockets?: { readonly allow: readonly string[] };
  /** Changes to the run-later set (`sandbox/run-later.ts`), each with its reason. */
  readonly runLater?: RunLaterPolicy;
}

/** `sandbox.filesystem.runLater`: names relative to each project directory; a trailing `/` is a directory. */
export interface RunLaterPolicy {
  readonly add: readonly { readonly path: string; readonly reason: string }[];
  readonly remove: readonly { readonly path: string; readonly reason: string }[];
}

/** A validated policy. Immutable; safe to share. */
export interface LoadedPolicy {
  /** Absolute path of the file (or the name given to `parsePolicyText`). */
  readonly path: string;
  /** Hex SHA-256 of the file bytes, for audit records. */
  readonly sha256: string;
  /**
   * The file's text as read (UTF-8). A judge in another process parses these
   * exact characters (`parsePolicyText`), so it judges the policy that was
   * hashed, not whatever the file holds later.
   */
  readonly text: string;
  readonly default: Verdict;
  readonly allowDynamic: boolean;
  readonly rules: readonly PolicyRule[];
  readonly limits: PolicyLimits;
  /** Absolute, symlink-resolved roots; `null` when the policy does not restrict the cwd. */
  readonly cwdRoots: readonly string[] | null;
  readonly env: EnvPolicy;
  /** `writes`; without the section (or its `default`), writes no pattern matches follow the policy's `default`. */
  readonly writes: WritesPolicy;
  readonly tests: readonly PolicyTest[];
  /** `sandbox`; without the section, `mode: off`. */
  readonly sandbox: SandboxPolicy;
  /** The base environment a command inherits from the server's: names matching `env.inherit`, minus the deny floor. */
  inheritedEnv(serverEnv: NodeJS.ProcessEnv): Record<string, string>;
}
