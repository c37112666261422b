import type { Token } from './analysis.js';

/** Builtins whose effect is decided by text only known at run time. */
const ALWAYS_DYNAMIC: Readonly<Record<string, string>> = {
  eval: '`eval` runs a string built at run time',
  source: '`source` runs a file the policy cannot see',
  '.': '`.` runs a file the policy cannot see',
  alias: '`alias` rebinds command names',
  trap: '`trap` registers a command string to run later',
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
  if (NAME_TAKING.has(name) && args.some((a) => SHELL_SYNTAX.test(a))) {
    return `\`${name}\` may re-evaluate shell syntax found in its literal arguments`;
  }
  return null;
}
