import { posix } from 'node:path';
import type { Token } from './analysis.js';
import { unwrapLauncher } from './launchers.js';
import { type OptionSpec, scanOptions } from './option-scan.js';
import type { Unwrapped } from './unwrapped.js';

export type { Unwrapped } from './unwrapped.js';

/**
 * An `env`/`sudo` operand that sets a variable: any word with a `=` not at
 * its start. Not only valid identifiers: `env 'BASH_FUNC_f%%=() { …; }'`
 * exports a function to a child bash.
 */
const ASSIGNMENT = /^[^=]+=/;

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
export const SHELLS: ReadonlySet<string> = new Set([
  'bash',
  'rbash',
  'sh',
  'dash',
  'zsh',
  'ksh',
  'mksh',
  'ash',
]);

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
  return name in SPECS || SHELLS.has(name) || name === 'find' || name === 'trap';
}

/** Unwraps `argv` (argv[0] is the wrapper, by basename `name`), or returns `null` for a non-wrapper. */
export function unwrap(name: string, argv: readonly Token[]): Unwrapped | null {
  if (SHELLS.has(name)) return unwrapShell(name, argv);
  if (name === 'find') return unwrapFind(argv);
  if (name === 'trap') return unwrapTrap(argv);
  const spec = SPECS[name];
  if (!spec) return unwrapLauncher(name, argv);
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
      // A lone `-` is `-i` (start from an empty environment), not the command.
      while (argv[i]?.literal && argv[i]!.text === '-') i++;
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
      return { ...none, via: 'su -c', scripts: suScript(argv), commandless: true };
    case 'xargs':
      if (i >= argv.length)
        return {
          ...none,
          run: [[{ text: 'echo', literal: true, glob: false, brace: false }]],
          commandless: true,
        };
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
    return { ...none, assignments, commandless: true };
  }
  return {
    via: name,
    run: [rest],
    scripts: [],
    assignments,
    ...(replace ? { replace } : {}),
    // With -I, xargs substitutes the input instead of appending it.
    ...(name === 'xargs' && !replace ? { appendsInput: true } : {}),
  };
}

/**
 * `trap [-lpP] [--] [ACTION] SIGNAL…`. ACTION runs later in the same shell,
 * so it is judged like a `bash -c` string. Nothing runs for `-l`/`-p`, a
 * single operand (a reset), an ACTION of `''` or `-`, or a first operand
 * that is a number (then every operand is a signal, reset).
 */
function unwrapTrap(argv: readonly Token[]): Unwrapped {
  const none: Unwrapped = { via: 'trap', run: [], scripts: [], assignments: [] };
  let i = 1;
  const first = argv[1];
  if (first?.literal && /^-[lpP]+$/.test(first.text)) return none;
  if (first?.literal && first.text === '--') i = 2;
  const operands = argv.slice(i);
  const action = operands[0];
  if (!action || operands.length === 1) return none;
  if (action.literal && (action.text === '' || action.text === '-' || /^\d+$/.test(action.text))) return none;
  return { ...none, scripts: [action] };
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
  let readsStdin = false;
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
      if (SHELL_LONG_VALUED.has(long)) {
        // Read only by an interactive shell, which reads its commands from stdin anyway.
        readsStdin = true;
        i++;
      } else if (!SHELL_LONG.has(long)) return { ...none, problem: `${name}: unknown option \`${word}\`` };
      continue;
    }
    if (/^[-+][A-Za-z]+$/.test(word)) {
      if (word.startsWith('-') && word.includes('c')) hasC = true;
      if (word.startsWith('-') && /[si]/.test(word)) readsStdin = true;
      // `-euo pipefail`: each o/O in a cluster takes the next word as its value.
      i += (word.match(/[oO]/g) ?? []).length;
      continue;
    }
    break;
  }
  if (!hasC) return shellScript(name, argv, i, readsStdin);
  const script = argv[i];
  if (!script) return { ...none, problem: `${name}: \`-c\` without a command string` };
  return { ...none, scripts: [script] };
}

/** Paths that are the process's stdin or another fd, whatever their spelling (`/dev//stdin`, `/proc/self/fd//0`). */
const FD_PATH = /^\/(dev\/(stdin|fd(\/.*)?|tcp\/.*|udp\/.*)|proc\/[^/]+\/(fd|task\/[^/]+\/fd)(\/.*)?)$/;

/**
 * A shell without `-c` runs the script file named by its first operand, or
 * reads its commands from stdin when there is none (or with `-s`/`-i`).
 * What a script file holds is the policy's business (rules on the shell and
 * the path); commands from stdin, an fd, or a path built from an expansion
 * (`bash <(curl …)`) cannot be judged.
 */
function shellScript(name: string, argv: readonly Token[], at: number, readsStdin: boolean): Unwrapped {
  const none: Unwrapped = { via: name, run: [], scripts: [], assignments: [] };
  const script = argv[at];
  if (readsStdin || !script || (script.literal && script.text === '-')) {
    return { ...none, dynamic: `\`${name}\` reads its commands from stdin`, commandless: true };
  }
  if (!script.literal) {
    return { ...none, dynamic: `\`${name}\` runs the script \`${script.text}\`, named at run time` };
  }
  if (FD_PATH.test(posix.normalize(script.text))) {
    return { ...none, dynamic: `\`${name}\` reads its commands from \`${script.text}\` (stdin or an fd)` };
  }
  return none;
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
  return { via: 'find -exec', run, scripts: [], assignments: [], replace: '{}', commandless: true };
}
