import type { Token } from './analysis.js';

/** Builtins whose effect is decided by text only known at run time. */
const ALWAYS_DYNAMIC: Readonly<Record<string, string>> = {
  eval: '`eval` runs a string built at run time',
  source: '`source` runs a file the policy cannot see',
  '.': '`.` runs a file the policy cannot see',
  alias: '`alias` rebinds command names',
  enable: '`enable` can load builtins from a shared object or shadow them',
  coproc: '`coproc` is not modeled by the parser',
  fc: '`fc` re-runs history entries',
  let: '`let` evaluates arithmetic, which can run command substitutions hidden in variables',
};

/** Builtins that take variable names, whose array subscripts bash evaluates (and may run `$(…)` in). */
const NAME_TAKING = new Set([
  'declare',
  'typeset',
  'local',
  'export',
  'readonly',
  'unset',
  'read',
  'printf',
  'mapfile',
  'readarray',
  'test',
  '[',
  'wait',
]);

const SHELL_SYNTAX = /\$\(|`|\$\{|\$\[/;

/** Name-taking builtins whose name operands may carry an array subscript (bash evaluates it). */
const SUBSCRIPT_NAMES = new Set([...NAME_TAKING].filter((n) => n !== 'printf' && n !== 'test' && n !== '['));

/** `name[expr]` with an expr that is not a plain number, `@` or `*`. */
const EVALUATED_SUBSCRIPT = /\[(?!\s*-?\d+\s*\]|[@*]\])[^\]]*\]/;

/** The variable names `printf -v NAME` / `-vNAME` assigns. */
function printfTargets(args: readonly string[]): string[] {
  const targets: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--' || !a.startsWith('-')) break;
    if (a === '-v' && args[i + 1] !== undefined) targets.push(args[++i]!);
    else if (a.startsWith('-v')) targets.push(a.slice(2));
  }
  return targets;
}

/**
 * Why running `argv` (argv[0] basename `name`) cannot be judged statically,
 * or `null`. Judged after unquoting, so `\eval` and `'eval'` are caught too.
 */
export function dynamicReason(name: string, argv: readonly Token[]): string | null {
  const always = ALWAYS_DYNAMIC[name];
  if (always) return always;
  const args = argv.slice(1).map((t) => t.text);
  if (name === 'compgen' && args.some((a) => /^-[a-zA-Z]*[CF]/.test(a))) {
    return '`compgen -C`/`-F` runs a command string or function';
  }
  if (name === 'hash' && args.some((a) => /^-[a-z]*p/.test(a)))
    return '`hash -p` binds a command name to another file';
  if ((name === 'mapfile' || name === 'readarray') && args.some((a) => /^-[a-z]*C/.test(a))) {
    return '`mapfile -C` runs a callback string';
  }
  if (name === 'shopt' && args.some((a) => a === 'expand_aliases' || a === 'extglob')) {
    return '`shopt` changes how later words are parsed';
  }
  if (
    (name === 'declare' || name === 'typeset' || name === 'local') &&
    args.some((a) => /^-[a-zA-Z]*i/.test(a))
  ) {
    return 'the integer attribute evaluates assigned values as arithmetic';
  }
  if ((name === 'test' || name === '[') && args.includes('-v')) return '`-v` evaluates an array subscript';
  if (
    (name === 'declare' || name === 'typeset' || name === 'local') &&
    args.some((a) => /^-[a-zA-Z]*n/.test(a))
  ) {
    return 'a nameref (`-n`) makes later expansions evaluate the referenced name and subscript';
  }
  const names = name === 'printf' ? printfTargets(args) : SUBSCRIPT_NAMES.has(name) ? args : [];
  const subscripted = names.find((a) => EVALUATED_SUBSCRIPT.test(a.split('=')[0]!));
  if (subscripted !== undefined) {
    return `\`${name}\` evaluates the subscript in \`${subscripted}\` at run time`;
  }
  // printf re-reads only its `-v` target (checked above), never its format or arguments.
  if (NAME_TAKING.has(name) && name !== 'printf' && args.some((a) => SHELL_SYNTAX.test(a))) {
    return `\`${name}\` may re-evaluate shell syntax found in its literal arguments`;
  }
  return null;
}

/** `read` options that take a value (the value of `-a` is an array name it assigns). */
const READ_VALUE_OPTIONS = new Set(['a', 'd', 'i', 'n', 'N', 'p', 't', 'u']);
/** `mapfile`/`readarray` options that take a value. */
const MAPFILE_VALUE_OPTIONS = new Set(['d', 'n', 'O', 's', 'u', 'C', 'c']);

/** Splits `-rp PROMPT name` style options; returns the values of `valueOptions` by letter and the operands. */
function scanOptions(
  args: readonly string[],
  valueOptions: ReadonlySet<string>,
): { values: { letter: string; value: string }[]; operands: string[] } {
  const values: { letter: string; value: string }[] = [];
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      i++;
      break;
    }
    if (!a.startsWith('-') || a === '-') break;
    for (let c = 1; c < a.length; c++) {
      const letter = a[c]!;
      if (!valueOptions.has(letter)) continue;
      const rest = a.slice(c + 1);
      values.push({ letter, value: rest !== '' ? rest : (args[++i] ?? '') });
      break;
    }
  }
  return { values, operands: args.slice(i) };
}

/**
 * Variable names a builtin assigns besides `NAME=value` words: `printf -v
 * NAME`, `read NAME…`/`read -a NAME`, `mapfile NAME`/`readarray NAME`. They
 * are checked like any assignment (the policy's env deny list), since
 * `read PATH <<< …` changes what later commands in the line run.
 */
export function assignedNames(name: string, args: readonly string[]): string[] {
  let names: string[] = [];
  if (name === 'printf') names = printfTargets(args);
  else if (name === 'read') {
    const { values, operands } = scanOptions(args, READ_VALUE_OPTIONS);
    names = [...values.filter((v) => v.letter === 'a').map((v) => v.value), ...operands];
  } else if (name === 'mapfile' || name === 'readarray') {
    const { operands } = scanOptions(args, MAPFILE_VALUE_OPTIONS);
    names = operands.slice(-1);
  }
  return names.map((n) => n.replace(/\[.*$/, '')).filter((n) => n !== '');
}
