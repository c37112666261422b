import type { Token } from './analysis.js';

/**
 * What a wrapper invocation runs. Wrappers are transparent launchers
 * (`env`, `timeout`, `xargs`, `find -exec`, `bash -c`, …): the wrapper itself
 * is judged as a command, and so is everything it would run.
 */
export interface Unwrapped {
  /** Label for `SimpleCommand.via`, e.g. `env`, `bash -c`, `find -exec`. */
  readonly via: string;
  /** Commands the wrapper runs, as argv. */
  readonly run: readonly (readonly Token[])[];
  /** Shell source strings it runs (`bash -c STRING`). */
  readonly scripts: readonly Token[];
  /** `NAME=VALUE` words it puts in the wrapped command's environment. */
  readonly assignments: readonly Token[];
  /** Set when the invocation cannot be judged (unknown option form, missing operand). */
  readonly problem?: string;
  /** Set when what runs is decided at run time (a script read from stdin or named by an expansion). */
  readonly dynamic?: string;
  /**
   * The wrapper appends run-time input to the command it runs (`xargs`):
   * when that command is itself a launcher, the input may name the program.
   */
  readonly appendsInput?: boolean;
  /**
   * The invocation names no command of its own (or, for `find` and `su`,
   * words appended to it can add one): words appended at run time could
   * name the program.
   */
  readonly commandless?: boolean;
  /**
   * The placeholder the wrapper replaces with run-time input in what it
   * runs (`{}` for `find -exec`, the `-I` string for `xargs`).
   */
  readonly replace?: string;
}
