import type { Token } from './analysis.js';
import { type OptionSpec, scanOptions } from './option-scan.js';

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
  /**
   * The placeholder the wrapper replaces with run-time input in what it
   * runs (`{}` for `find -exec`, the `-I` string for `xargs`).
   */
  readonly replace?: string;
}

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

const SPECS: Readonly<Record<string, OptionSpec>> = {
  env: {
    flags: 'i0v',
    valued: 'uCS',
    longFlags: ['ignore-environment', 'null', 'debug', 'list-signal-handling'],
    longValued: ['unset', 'chdir', 'split-string'],
    longOptional: ['ignore-signal', 'default-signal', 'block-signal'],
  },
  nice: { valued: 'n', longValued: ['adjustment'], numericShort: true },
  timeout: {
    flags: 'v',
    valued: 'sk',
    longFlags: ['preserve-status', 'foreground', 'verbose'],
    longValued: ['signal', 'kill-after'],
  },
  nohup: {},
  stdbuf: { valued: 'ioe', longValued: ['input', 'output', 'error'] },
  time: {
    flags: 'pvaq',
    valued: 'fo',
    longFlags: ['portability', 'verbose', 'append', 'quiet'],
    longValued: ['format', 'output'],
  },
  command: { flags: 'pvV' },
  builtin: {},
  exec: { flags: 'cl', valued: 'a' },
  sudo: {
    flags: 'AbBeEHiKklnNPsSVv',
    valued: 'CDghpRrtTuU',
    longFlags: [
      'askpass',
      'background',
      'bell',
      'edit',
      'set-home',
      'login',
      'remove-timestamp',
      'reset-timestamp',
      'list',
      'non-interactive',
      'preserve-groups',
      'stdin',
      'shell',
      'validate',
      'version',
    ],
    longValued: [
      'close-from',
      'chdir',
      'group',
      'host',
      'prompt',
      'chroot',
      'role',
      'type',
      'command-timeout',
      'other-user',
      'user',
    ],
    longOptional: ['preserve-env'],
  },
  doas: { flags: 'nsL', valued: 'uC' },
  setsid: { flags: 'cfw', longFlags: ['ctty', 'fork', 'wait'] },
  xargs: {
    flags: '0prtxo',
    valued: 'adEILnPs',
    optionalValued: 'eil',
    longFlags: ['null', 'interactive', 'no-run-if-empty', 'verbose', 'exit', 'open-tty', 'show-limits'],
    longValued: ['arg-file', 'delimiter', 'max-args', 'max-procs', 'max-chars', 'process-slot-var'],
    longOptional: ['max-lines', 'replace', 'eof'],
  },
  su: {
    flags: 'lmpfP',
    valued: 'cgGsw',
    longFlags: ['login', 'preserve-environment', 'pty', 'fast'],
    longValued: ['command', 'group', 'supp-group', 'shell', 'whitelist-environment'],
  },
};

/** Shells whose `-c STRING` is parsed (with the bash grammar) and judged. */
export const SHELLS: ReadonlySet<string> = new Set(['bash', 'sh', 'dash', 'zsh', 'ksh', 'mksh', 'ash']);

const SHELL_LONG = new Set([
  'norc',
  'noprofile',
  'login',
  'posix',
  'noediting',
  'restricted',
  'verbose',
  'version',
  'help',
]);
const SHELL_LONG_VALUED = new Set(['rcfile', 'init-file']);

const FIND_ACTIONS = new Set(['-exec', '-execdir', '-ok', '-okdir']);

/** Programs this module unwraps; everything else is an ordinary command. */
export function isWrapper(name: string): boolean {
  return name in SPECS || SHELLS.has(name) || name === 'find';
}

/** Unwraps `argv` (argv[0] is the wrapper, by basename `name`), or returns `null` for a non-wrapper. */
export function unwrap(name: string, argv: readonly Token[]): Unwrapped | null {
  if (SHELLS.has(name)) return unwrapShell(name, argv);
  if (name === 'find') return unwrapFind(argv);
  const spec = SPECS[name];
  if (!spec) return null;
  const scan = scanOptions(argv, 1, spec, name);
  const none: Unwrapped = { via: name, run: [], scripts: [], assignments: [] };
  if (scan.problem) return { ...none, problem: scan.problem };
  let i = scan.next;
  const assignments: Token[] = [];
  switch (name) {
    case 'env':
      if (scan.seen.has('S') || scan.seen.has('split-string')) {
        return { ...none, problem: 'env: `-S` splits a string into a command; not judged' };
      }
      break;
    case 'timeout': {
      const duration = argv[i];
      if (!duration?.literal || !/^(\d+\.?\d*|\.\d+)[smhd]?$/.test(duration.text)) {
        return { ...none, problem: 'timeout: expected a literal DURATION before the command' };
      }
      i++;
      break;
    }
    case 'command':
      if (scan.seen.has('v') || scan.seen.has('V')) return none;
      break;
    case 'su':
      // su runs `-c STRING` with the target user's shell; anything else starts a login shell.
      return { ...none, via: 'su -c', scripts: suScript(argv) };
    case 'xargs':
      if (i >= argv.length)
        return { ...none, run: [[{ text: 'echo', literal: true, glob: false, brace: false }]] };
      break;
  }
  if (name === 'env' || name === 'sudo') {
    while (i < argv.length && argv[i]!.literal && ASSIGNMENT.test(argv[i]!.text))
      assignments.push(argv[i++]!);
  }
  const rest = argv.slice(i);
  const replace = name === 'xargs' ? xargsReplace(argv.slice(1, scan.next)) : undefined;
  if (rest.length === 0) {
    if (name === 'nohup' || name === 'stdbuf' || name === 'nice' || name === 'timeout' || name === 'setsid') {
      return { ...none, problem: `${name}: missing the command to run` };
    }
    return { ...none, assignments };
  }
  return { via: name, run: [rest], scripts: [], assignments, ...(replace ? { replace } : {}) };
}

/** The replace string of `xargs -I R` / `-IR` / `-i[R]` / `--replace[=R]`, if any. */
function xargsReplace(options: readonly Token[]): string | undefined {
  let replace: string | undefined;
  for (let i = 0; i < options.length; i++) {
    const word = options[i]!.text;
    if (word === '--replace') replace = '{}';
    else if (word.startsWith('--replace=')) replace = word.slice('--replace='.length) || '{}';
    else if (/^-[^-]/.test(word)) {
      // Short clusters: the first valued letter ends the cluster.
      const at = word.search(/[adEILnPsei]/);
      if (at === -1) continue;
      const letter = word[at]!;
      const attached = word.slice(at + 1);
      if (letter === 'I') replace = attached || options[i + 1]?.text;
      else if (letter === 'i') replace = attached || '{}';
      if (!attached && 'adEILnPs'.includes(letter)) i++;
    }
  }
  return replace;
}

function suScript(argv: readonly Token[]): Token[] {
  const scripts: Token[] = [];
  for (let i = 1; i < argv.length; i++) {
    const word = argv[i]!.text;
    if ((word === '-c' || word === '--command') && argv[i + 1]) scripts.push(argv[i + 1]!);
    else if (word.startsWith('--command='))
      scripts.push({ ...argv[i]!, text: word.slice('--command='.length) });
  }
  return scripts;
}

/**
 * `bash [options] -c STRING [name [args…]]`. Without `-c` the shell runs a
 * script file or reads stdin: nothing more to unwrap (the policy judges the
 * shell itself).
 */
function unwrapShell(name: string, argv: readonly Token[]): Unwrapped {
  const via = `${name} -c`;
  const none: Unwrapped = { via, run: [], scripts: [], assignments: [] };
  let hasC = false;
  let i = 1;
  for (; i < argv.length; i++) {
    const token = argv[i]!;
    const word = token.text;
    if (!token.literal) {
      if (word.startsWith('-') || word.startsWith('+'))
        return { ...none, problem: `${name}: option \`${word}\` is not a literal word` };
      break;
    }
    if (word === '--' || word === '-') {
      i++;
      break;
    }
    if (word.startsWith('--')) {
      const long = word.slice(2);
      if (SHELL_LONG_VALUED.has(long)) i++;
      else if (!SHELL_LONG.has(long)) return { ...none, problem: `${name}: unknown option \`${word}\`` };
      continue;
    }
    if (/^[-+][A-Za-z]+$/.test(word)) {
      if (word.startsWith('-') && word.includes('c')) hasC = true;
      // `-euo pipefail`: each o/O in a cluster takes the next word as its value.
      i += (word.match(/[oO]/g) ?? []).length;
      continue;
    }
    break;
  }
  if (!hasC) return none;
  const script = argv[i];
  if (!script) return { ...none, problem: `${name}: \`-c\` without a command string` };
  return { ...none, scripts: [script] };
}

/** `find … -exec CMD … ;` / `+` (also `-execdir`, `-ok`, `-okdir`). */
function unwrapFind(argv: readonly Token[]): Unwrapped {
  const run: Token[][] = [];
  for (let i = 1; i < argv.length; i++) {
    if (!(argv[i]!.literal && FIND_ACTIONS.has(argv[i]!.text))) continue;
    const action = argv[i]!.text;
    const start = i + 1;
    let end = start;
    while (end < argv.length && !(argv[end]!.literal && (argv[end]!.text === ';' || argv[end]!.text === '+')))
      end++;
    if (end >= argv.length || end === start) {
      return {
        via: 'find -exec',
        run,
        scripts: [],
        assignments: [],
        problem: `find: \`${action}\` without a terminating \`;\` or \`+\``,
      };
    }
    run.push(argv.slice(start, end));
    i = end;
  }
  return { via: 'find -exec', run, scripts: [], assignments: [], replace: '{}' };
}
