import type { Redirection, SimpleCommand } from '../decision.js';

/** A byte range `[start, end)` in the judged line. */
export type Range = readonly [number, number];

/**
 * Why part of a line cannot be judged statically.
 * - `unparseable`: the parser cannot be trusted here (syntax errors, known
 *   tree-sitter-vs-bash gaps, unknown node kinds). Always denied.
 * - `dynamic`: well-formed, but what runs is decided at run time (`$cmd`,
 *   `eval`, `source`, `${v@P}`, …). Denied unless the policy sets
 *   `allowDynamic: true`.
 */
export interface Problem {
  readonly kind: 'unparseable' | 'dynamic';
  readonly message: string;
  readonly range?: Range;
  readonly via: readonly string[];
}

/** A variable the line assigns (`FOO=1 cmd`, `export FOO=1`, `env FOO=1 cmd`). */
export interface Assignment {
  readonly name: string;
  readonly range?: Range;
  readonly via: readonly string[];
  /**
   * The value reaches a program's environment: a prefix (`NAME=v cmd`),
   * `export`/`declare -x`, an `env`/`sudo` operand. Otherwise a shell
   * variable, which reaches programs only when the name is already exported.
   */
  readonly exported?: true;
}

/** Everything the engine needs to judge a line, independent of any policy. */
export interface LineAnalysis {
  /** Every simple command found, wrappers and their wrapped commands included, in source order. */
  readonly commands: readonly SimpleCommand[];
  /** The words of each command (same order as `commands`): what quoting left unexpanded. */
  readonly words: readonly (readonly Token[])[];
  readonly problems: readonly Problem[];
  readonly assignments: readonly Assignment[];
  /**
   * Every output redirection, once each, in source order: also those of
   * compound commands and of lines with no command (`> f`).
   */
  readonly redirects: readonly Redirection[];
}

/** One word after unquoting, as the shell would pass it (when `literal`). */
export interface Token {
  /** The unquoted value when `literal`; otherwise the source text. */
  readonly text: string;
  /** False when the value depends on an expansion (`$x`, `$(…)`, …). */
  readonly literal: boolean;
  /** Unquoted glob characters (pathname expansion) present. */
  readonly glob: boolean;
  /** Unquoted brace expansion (`{a,b}`, `{1..3}`) present: the word may become several. */
  readonly brace: boolean;
  /**
   * Bash replaces a tilde prefix in this word with a home directory: an
   * unquoted leading `~`, or one right after the `=` of a word shaped like
   * an assignment (`a=~/x`). `text` keeps the `~`.
   */
  readonly tilde?: boolean;
  readonly range?: Range;
}

/** A token built from a plain string (argv requests, wrapper internals). */
export function literalToken(text: string, range?: Range): Token {
  return range
    ? { text, literal: true, glob: false, brace: false, range }
    : { text, literal: true, glob: false, brace: false };
}
