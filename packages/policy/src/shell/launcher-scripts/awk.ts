/** What an awk program runs: the literal command strings, or why that cannot be known. */
export interface AwkCommands {
  readonly commands: readonly string[];
  readonly dynamic?: string;
}

/**
 * The shell commands an awk program runs: `system("CMD")`, `"CMD" | getline`,
 * `print … | "CMD"` and gawk's `|&` (each run with `sh -c`). A string
 * literal is a command to judge; anything else there (a variable, a
 * concatenation) is known only at run time. Strings, regex literals and
 * comments are set aside before looking, so `/a|b/` and `"x|y"` run nothing.
 */
export function awkCommands(program: string): AwkCommands {
  const strings: string[] = [];
  const skeleton = skeletonOf(program, strings);
  const commands: string[] = [];
  let rest = skeleton.replace(/\bsystem\s*\(\s*S(\d+)\s*\)/g, (_m, n: string) => {
    commands.push(strings[Number(n)]!);
    return ' ';
  });
  rest = rest.replace(/S(\d+)\s*\|&?\s*getline/g, (_m, n: string) => {
    commands.push(strings[Number(n)]!);
    return ' ';
  });
  rest = rest.replace(/\|\|/g, ' ');
  rest = rest.replace(/\|&?\s*S(\d+)(?!\s*[^\s;}])/g, (_m, n: string) => {
    commands.push(strings[Number(n)]!);
    return ' ';
  });
  if (/\bsystem\b/.test(rest)) return { commands, dynamic: '`system()` runs a command built at run time' };
  if (rest.includes('|')) return { commands, dynamic: 'a pipe (`|`, `|&`) runs a command built at run time' };
  return { commands };
}

/**
 * The program with each string literal replaced by `S<n>` (its value in
 * `strings`), each regex literal by `R`, each comment removed. A `/` opens
 * a regex where an operand may start (after an operator, `(`, `,`, `{`,
 * `;`, a newline or the start).
 */
function skeletonOf(program: string, strings: string[]): string {
  let out = '';
  let i = 0;
  const operandStart = (): boolean => {
    const before = out.replace(/[ \t]+$/, '');
    return (
      before === '' || /[(,{};!~&|=+\-*%<>?:\n]$/.test(before) || /\b(print|printf|return|in)$/.test(before)
    );
  };
  while (i < program.length) {
    const c = program[i]!;
    if (c === '"') {
      let value = '';
      i++;
      while (i < program.length && program[i] !== '"') {
        if (program[i] === '\\' && i + 1 < program.length) {
          const e = program[i + 1]!;
          value += e === 'n' ? '\n' : e === 't' ? '\t' : e === '"' || e === '\\' || e === '/' ? e : `\\${e}`;
          i += 2;
        } else value += program[i++];
      }
      i++;
      out += `S${strings.length} `;
      strings.push(value);
    } else if (c === '/' && operandStart()) {
      i++;
      let inBracket = false;
      while (i < program.length && (program[i] !== '/' || inBracket) && program[i] !== '\n') {
        if (program[i] === '\\') i++;
        else if (program[i] === '[') inBracket = true;
        else if (program[i] === ']') inBracket = false;
        i++;
      }
      i++;
      out += 'R ';
    } else if (c === '#') {
      while (i < program.length && program[i] !== '\n') i++;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}
