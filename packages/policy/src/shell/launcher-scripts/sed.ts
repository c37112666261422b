/** What a sed script runs. */
export interface SedCommands {
  /** The command texts of GNU sed's `e COMMAND` (run with `sh -c`). */
  readonly commands: readonly string[];
  /** Set when it runs something known only at run time (`e` alone, the `e` flag of `s`). */
  readonly dynamic?: string;
  /** Set when the script could not be read as sed (then what it runs is not known). */
  readonly problem?: string;
}

const NO_ARGUMENT = new Set('=dDgGhHnNpPxzF'.split(''));
const TO_END_OF_LINE = new Set('aicrRwW'.split(''));

/**
 * Reads a GNU sed script command by command (addresses, `!`, blocks,
 * `s`/`y` with any delimiter, text and file arguments to the end of the
 * line, labels) to find what it runs: `e COMMAND`, `e` (the pattern space)
 * and the `e` flag of `s` (the pattern space after the substitution).
 * Anything it cannot read is a problem, not a guess.
 */
export function sedCommands(script: string): SedCommands {
  const commands: string[] = [];
  let i = 0;
  const n = script.length;
  const skipBlanks = (): void => {
    while (i < n && (script[i] === ' ' || script[i] === '\t')) i++;
  };
  const toEndOfLine = (): string => {
    let text = '';
    while (i < n && script[i] !== '\n') {
      if (script[i] === '\\' && script[i + 1] === '\n') {
        text += '\n';
        i += 2;
        continue;
      }
      text += script[i++];
    }
    return text;
  };
  /** Skips a delimited part (`/re/`, the parts of `s`), the opening delimiter already consumed. */
  const delimited = (delim: string): boolean => {
    while (i < n && script[i] !== delim) {
      if (script[i] === '\\') i++;
      else if (script[i] === '\n' && delim !== '\n') return false;
      i++;
    }
    if (i >= n) return false;
    i++;
    return true;
  };
  const address = (): boolean => {
    const c = script[i];
    if (c === undefined) return true;
    if (/\d/.test(c)) {
      while (i < n && /[\d~]/.test(script[i]!)) i++;
    } else if (c === '$') i++;
    else if (c === '/') {
      i++;
      if (!delimited('/')) return false;
      while (i < n && /[IM]/.test(script[i]!)) i++;
    } else if (c === '\\') {
      const delim = script[i + 1];
      if (delim === undefined) return false;
      i += 2;
      if (!delimited(delim)) return false;
      while (i < n && /[IM]/.test(script[i]!)) i++;
    }
    return true;
  };
  while (i < n) {
    while (i < n && /[\s;]/.test(script[i]!)) i++;
    if (i >= n) break;
    if (script[i] === '#') {
      toEndOfLine();
      continue;
    }
    if (!address()) return { commands, problem: 'an address is not terminated' };
    skipBlanks();
    if (script[i] === ',') {
      i++;
      skipBlanks();
      if (script[i] === '+' || script[i] === '~') i++;
      if (!address()) return { commands, problem: 'an address is not terminated' };
      skipBlanks();
    }
    while (script[i] === '!' || script[i] === ' ') i++;
    const cmd = script[i++];
    if (cmd === undefined) return { commands, problem: 'an address without a command' };
    if (cmd === '{' || cmd === '}' || NO_ARGUMENT.has(cmd)) continue;
    if (cmd === 'e') {
      skipBlanks();
      const text = toEndOfLine().trim();
      if (text === '') return { commands, dynamic: 'the `e` command runs the pattern space as a command' };
      commands.push(text);
    } else if (TO_END_OF_LINE.has(cmd)) {
      toEndOfLine();
    } else if (cmd === 's' || cmd === 'y') {
      const delim = script[i++];
      if (delim === undefined || delim === '\n' || delim === '\\')
        return { commands, problem: `\`${cmd}\` has no delimiter` };
      if (!delimited(delim) || !delimited(delim))
        return { commands, problem: `\`${cmd}\` is not terminated` };
      if (cmd === 's') {
        while (i < n && /[gGpPiImMe0-9w]/.test(script[i]!)) {
          const flag = script[i++]!;
          if (flag === 'e')
            return { commands, dynamic: 'the `e` flag of `s` runs the pattern space as a command' };
          if (flag === 'w') {
            toEndOfLine();
            break;
          }
        }
      }
    } else if (cmd === 'b' || cmd === 't' || cmd === 'T' || cmd === ':' || cmd === 'v') {
      while (i < n && script[i] !== ';' && script[i] !== '\n' && !(cmd !== ':' && script[i] === '}')) i++;
    } else if (cmd === 'q' || cmd === 'Q' || cmd === 'l' || cmd === 'L') {
      skipBlanks();
      while (i < n && /\d/.test(script[i]!)) i++;
    } else {
      return { commands, problem: `unknown command \`${cmd}\`` };
    }
  }
  return { commands };
}
