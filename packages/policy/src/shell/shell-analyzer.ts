import type { LineAnalysis } from './analysis.js';
import { literalToken } from './analysis.js';
import type { BashParser } from './bash-grammar.js';
import { ShellWalk } from './shell-walk.js';

export { MAX_PIPES } from './shell-walk.js';

/**
 * Finds every simple command a bash line would run, using tree-sitter-bash
 * behind an allowlist of node kinds (the walk, `shell-walk.ts`). Whatever it
 * cannot model is reported as a `Problem` rather than guessed: the places
 * where the parser and bash disagree (`bash-disagreements.ts`), what bash
 * evaluates at run time (`run-time-evaluation.ts`) and redirection targets
 * not known in advance (`redirections.ts`). Synchronous; never throws for
 * any input string.
 */
export class ShellAnalyzer {
  constructor(private readonly parser: BashParser) {}

  /** Analyzes a command line as `bash -c LINE` would run it. */
  analyzeLine(line: string): LineAnalysis {
    const walk = new ShellWalk(this.parser);
    if (tooLong(line.length, walk)) return walk.result();
    walk.text(line, { via: [], functions: new Set(), depth: 0 });
    return walk.result();
  }

  /** Analyzes an argv request (no shell): one command, wrappers unwrapped, `bash -c` strings parsed. */
  analyzeArgv(argv: readonly string[]): LineAnalysis {
    const walk = new ShellWalk(this.parser);
    if (
      tooLong(
        argv.reduce((n, a) => n + a.length + 1, 0),
        walk,
      )
    )
      return walk.result();
    walk.emit(
      argv.map((a) => literalToken(a)),
      undefined,
      { via: [], functions: new Set(), depth: 0 },
    );
    return walk.result();
  }
}

/**
 * Longest line (or argv, summed) judged, in UTF-16 code units. Linux refuses
 * a single exec argument over 128 KiB (MAX_ARG_STRLEN), so `bash -c LINE`
 * could not run a longer line anyway, and judging one costs about a second.
 */
export const MAX_LINE_LENGTH = 128 * 1024;

function tooLong(length: number, walk: ShellWalk): boolean {
  if (length <= MAX_LINE_LENGTH) return false;
  walk.refuse(`a command of ${length} characters (the limit is ${MAX_LINE_LENGTH})`);
  return true;
}
