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

/** One simple command the line would run, after unquoting. */
export interface SimpleCommand {
  /** argv[0] as written after unquoting (`\rm` → `rm`). */
  readonly program: string;
  readonly argv: readonly string[];
  /** Byte range in the judged line, when it came from a line. */
  readonly range?: readonly [number, number];
  /** How it was reached: e.g. `['pipeline', 'command_substitution']`, `['bash -c']`, `['xargs']`. */
  readonly via: readonly string[];
}

export type Verdict = 'allow' | 'deny';

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
}
