/**
 * The contract between the policy engine (which judges) and the gate (which
 * records and answers). Both sides import these types; neither redefines them.
 */

/** What the engine judges: one create request, resolved by the termhost. */
export interface CommandRequest {
  /** A command line (when `args` is null) or a program (when `args` is an array). */
  readonly command: string;
  readonly args: readonly string[] | null;
  /** Absolute working directory as requested (the engine resolves symlinks itself). */
  readonly cwd: string;
  /** Only the variables the client asked to set. */
  readonly env: Readonly<Record<string, string>>;
}

/**
 * An output redirection: a file the line opens for writing (`>`, `>>`, `>|`,
 * `&>`, `&>>`, `>&FILE`). fd duplications (`2>&1`, `>&2`, `1>&-`) are not
 * redirections in this sense.
 */
export interface Redirection {
  /** As written: `>`, `>>`, `>|`, `&>`, `&>>` or `>&`. */
  readonly operator: string;
  /** The fd written (`2` in `2>f`, `{fd}` in `{fd}>f`); absent for the default. */
  readonly descriptor?: string;
  /** The target after unquoting when `literal`; otherwise its source text. */
  readonly target: string;
  /** False when the target depends on an expansion or substitution (never judged as a path). */
  readonly literal: boolean;
  /** The target starts with an unquoted `~` or `~/` (bash replaces it with the home directory). */
  readonly tilde: boolean;
  /** Byte range of the redirection in the judged line, when it came from a line. */
  readonly range?: readonly [number, number];
  readonly via: readonly string[];
  /** The absolute path the engine judged (symlinks of existing parts resolved), when it resolved one. */
  readonly path?: string;
}

/** One simple command the line would run, after unquoting. */
export interface SimpleCommand {
  /** argv[0] as written after unquoting (`\rm` → `rm`). */
  readonly program: string;
  readonly argv: readonly string[];
  /** Byte range in the judged line, when it came from a line. */
  readonly range?: readonly [number, number];
  /** How it was reached: e.g. `['pipeline', 'command_substitution']`, `['bash -c']`, `['xargs']`. */
  readonly via: readonly string[];
  /**
   * Output redirections that apply to it: its own and those of enclosing
   * compound commands (`{ a; b; } > f`). Absent when there are none.
   */
  readonly redirects?: readonly Redirection[];
  /**
   * Words known only at run time end up in its argv: `xargs` appends its
   * input, or substitutes it for `placeholder` (`-I R`). Deny and ask rules
   * on its program match conservatively (see docs/POLICY-SPELLINGS.md).
   */
  readonly runTimeInput?: { readonly placeholder?: string };
}

/**
 * `ask`: the command may run only once a person approved it (the gate asks
 * through the caller's approver). Precedence is deny over ask over allow.
 */
export type Verdict = 'allow' | 'deny' | 'ask';

export interface PolicyDecision {
  readonly decision: Verdict;
  /** Ids of the rules that made the decision; empty when `default` decided. */
  readonly ruleIds: readonly string[];
  /** One sentence a model and a reviewer can act on. */
  readonly reason: string;
  /** Every simple command found, in source order. */
  readonly subcommands: readonly SimpleCommand[];
  /** The cwd after realpath, when it resolved. The host spawns there. */
  readonly resolvedCwd: string | null;
  /** Under a managed policy layer (`LayeredPolicyEngine`): the layer that decided. */
  readonly layer?: 'managed' | 'workspace';
}
