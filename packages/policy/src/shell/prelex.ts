import type { Problem } from './analysis.js';

/**
 * Raw-text checks, run before parsing, for places where tree-sitter-bash is
 * known to read the line differently from bash (the bash manual, "Shell
 * Syntax": https://www.gnu.org/software/bash/manual/bash.html#Shell-Syntax).
 *
 * - A backslash-newline is accepted only as an ordinary line continuation
 *   after a blank (`cmd \⏎  --flag`). Anywhere else (`"$\⏎(cmd)"`, `r\⏎m`,
 *   `$\⏎{v@P}`) bash splices the lines and tree-sitter does not, so the line
 *   is refused.
 * - Parameter transformations `${v@P}`/`${v@E}`/… can re-evaluate text as a
 *   prompt or escape string; they are refused wherever they appear.
 * - A NUL byte never reaches bash intact; refused.
 * - A carriage return is a word character to bash but a blank to the
 *   parser: `ls \␍⏎rm x` is one continued `ls` to tree-sitter, while bash
 *   passes `␍` to ls and runs `rm x` on the next line. Refused anywhere
 *   (send LF line endings).
 */
export function prelex(line: string, via: readonly string[]): Problem[] {
  const problems: Problem[] = [];
  for (let i = line.indexOf('\\\n'); i !== -1; i = line.indexOf('\\\n', i + 2)) {
    const before = i === 0 ? '\n' : line[i - 1]!;
    if (before !== ' ' && before !== '\t') {
      problems.push({
        kind: 'unparseable',
        message:
          'a backslash-newline that is not a plain line continuation (bash splices it, the parser does not)',
        range: [i, i + 2],
        via,
      });
    }
  }
  const transform = /\$\{[^}]*@[A-Za-z]/.exec(line);
  if (transform) {
    problems.push({
      kind: 'dynamic',
      message: `parameter transformation \`${transform[0]}…}\` can re-evaluate text at run time`,
      range: [transform.index, transform.index + transform[0].length],
      via,
    });
  }
  const cr = line.indexOf('\r');
  if (cr !== -1) {
    problems.push({
      kind: 'unparseable',
      message:
        'a carriage return (bash reads it as part of a word, the parser as a blank; use LF line endings)',
      range: [cr, cr + 1],
      via,
    });
  }
  const nul = line.indexOf('\0');
  if (nul !== -1) problems.push({ kind: 'unparseable', message: 'a NUL byte', range: [nul, nul + 1], via });
  return problems;
}
