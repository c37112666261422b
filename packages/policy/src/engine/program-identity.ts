import { accessSync, constants, statSync } from 'node:fs';
import { basename, isAbsolute, posix } from 'node:path';
import type { Redirection, SimpleCommand } from '../decision.js';
import { isInside, realpathOrNull } from '../policy-file/policy-paths.js';
import type { Token } from '../shell/analysis.js';
import { touchedPaths } from './touched-paths.js';

/** Bash builtins and keywords: a command name bash never looks up on PATH. */
const BUILTINS = new Set(
  (
    '. : [ alias bg bind break builtin caller cd command compgen complete compopt continue declare ' +
    'dirs disown echo enable eval exec exit export false fc fg getopts hash help history jobs kill ' +
    'let local logout mapfile popd printf pushd pwd read readarray readonly return set shift shopt ' +
    'source suspend test times trap true type typeset ulimit umask unalias unset wait'
  ).split(' '),
);

/**
 * Programs that copy or link an existing file to the names in their
 * arguments: a program the same line then runs by one of those names may
 * be any program on the machine under another name (`ln -s /usr/bin/sudo x
 * && ./x`). Such a line is refused under every policy.
 */
export const COPIERS: ReadonlySet<string> = new Set([
  'ln',
  'cp',
  'mv',
  'install',
  'rsync',
  'scp',
  'dd',
  'tee',
]);

/**
 * Programs that create files named in their arguments from other content
 * (downloads, builds, `touch`): what they make is a new workspace file,
 * never a trusted tool, but running it is ordinary (`go build -o app &&
 * ./app`), so it only keeps a basename allow rule from matching.
 */
const MAKERS: ReadonlySet<string> = new Set([
  ...COPIERS,
  'curl',
  'wget',
  'touch',
  'gcc',
  'cc',
  'clang',
  'go',
  'rustc',
  'ld',
]);

/** PATH when the terminal has none: bash's built-in default. */
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** How the program of one command in a line was identified. */
export interface ProgramIdentity {
  /** The file it runs now, realpath'd; absent for builtins and programs not found. */
  readonly file?: string;
  /**
   * A builtin, or a file found now outside every writable root (or nothing
   * found, in places outside them), not created earlier in the line.
   */
  readonly trusted: boolean;
  /** The command of an earlier part of the line that creates or links it, when there is one. */
  readonly createdBy?: string;
}

/** What identifying programs needs to know about one line. */
export interface LineFacts {
  readonly commands: readonly SimpleCommand[];
  readonly words: readonly (readonly Token[])[];
  readonly redirects: readonly Redirection[];
  /** Every directory the line may be in; null when not known in advance. */
  readonly dirs: readonly string[] | null;
  /** The terminal's PATH. */
  readonly path: string | undefined;
  /** A shell line (builtins exist), not an argv request. */
  readonly shell: boolean;
  readonly writable: readonly string[];
}

/**
 * Identifies the program of `facts.commands[index]`: a builtin; a name
 * looked up on PATH (the first executable regular file); or a path, taken
 * against the line's directory. It is trusted only when that file exists
 * now, lies outside every writable root, and no earlier part of the line
 * creates or links a file by its name (`ln -s /usr/bin/sudo x && ./x`,
 * `cp … ~/bin/git; git`, `… > ./x`).
 */
export function identifyProgram(facts: LineFacts, index: number): ProgramIdentity {
  const command = facts.commands[index]!;
  const program = command.program;
  const createdBy = creator(facts, index, MAKERS);
  if (facts.shell && !program.includes('/') && BUILTINS.has(program))
    return createdBy ? { trusted: false, createdBy } : { trusted: true };
  const found = locate(program, facts);
  if (createdBy !== undefined) return { ...found, trusted: false, createdBy };
  return found;
}

/**
 * The file a program name runs now: the first executable regular file on
 * PATH (a relative entry taken against the line's directory), or the path
 * written. Trusted when that file lies outside every writable root. A name
 * found nowhere runs nothing (bash answers `command not found`): trusted,
 * unless the line creates it (`creator`).
 */
function locate(program: string, facts: LineFacts): ProgramIdentity {
  const outside = (path: string): boolean => !facts.writable.some((root) => isInside(path, root));
  const at = (path: string): ProgramIdentity => {
    const file = executable(path);
    if (file !== null) return { file, trusted: outside(file) };
    return { trusted: outside(posix.dirname(posix.resolve(path))) };
  };
  if (program.includes('/')) {
    if (isAbsolute(program)) return at(program);
    if (facts.dirs === null || facts.dirs.length !== 1) return { trusted: false };
    return at(posix.join(facts.dirs[0]!, program));
  }
  for (const entry of (facts.path ?? DEFAULT_PATH).split(':')) {
    let dir = entry;
    if (!isAbsolute(entry)) {
      // An empty or relative entry is the line's directory, when known.
      if (facts.dirs === null || facts.dirs.length !== 1) return { trusted: false };
      dir = posix.join(facts.dirs[0]!, entry);
    }
    const file = executable(posix.join(dir, program));
    if (file !== null) return { file, trusted: outside(file) };
  }
  return { trusted: true };
}

function executable(path: string): string | null {
  try {
    if (!statSync(path).isFile()) return null;
    accessSync(path, constants.X_OK);
  } catch {
    return null;
  }
  return realpathOrNull(path);
}

/**
 * The earlier command (or redirection) that names the program's file:
 * an argument of one of `programs` (by default the copiers) or a
 * redirection target that resolves to the same path, or, for a name looked
 * up on PATH, a path argument with that basename (it may land in a PATH
 * directory).
 */
export function creator(
  facts: LineFacts,
  index: number,
  programs: ReadonlySet<string> = COPIERS,
  program: string = facts.commands[index]!.program,
): string | undefined {
  const command = facts.commands[index]!;
  const name = basename(program);
  const targets = programPaths(program, facts.dirs);
  const names = (word: string, path: string): boolean =>
    targets === null ? word.includes('/') && basename(path) === name : targets.includes(path);
  for (let j = 0; j < index; j++) {
    const earlier = facts.commands[j]!;
    if (!programs.has(basename(earlier.program))) continue;
    for (const touched of touchedPaths(facts.words[j]!, facts.dirs)) {
      if (!touched.glob && names(touched.word, touched.path)) return earlier.argv.join(' ');
      if (touched.glob && basename(touched.path) === name) return earlier.argv.join(' ');
    }
  }
  const start = command.range?.[0] ?? Number.POSITIVE_INFINITY;
  for (const r of facts.redirects) {
    if (!r.literal || (r.range?.[0] ?? 0) >= start) continue;
    const target = r.target;
    if (basename(target) === name && (targets === null ? target.includes('/') : true)) {
      return `${r.operator} ${r.target}`;
    }
  }
  return undefined;
}

/** The absolute paths a program path may name; null for a name looked up on PATH. */
function programPaths(program: string, dirs: readonly string[] | null): string[] | null {
  if (!program.includes('/')) return null;
  if (isAbsolute(program)) return [posix.resolve(program)];
  return (dirs ?? []).map((d) => posix.join(d, program));
}

/** Interpreters that run a script file named by their first operand. */
const INTERPRETERS =
  /^(bash|rbash|sh|dash|zsh|ksh|mksh|ash|python(\d+(\.\d+)?)?|node|nodejs|deno|bun|perl|ruby|php|lua|tclsh|Rscript)$/;

const SHELL_NAMES = /^(bash|rbash|sh|dash|zsh|ksh|mksh|ash)$/;

/**
 * The script file a shell or interpreter runs, as a path (`x.sh` → `./x.sh`):
 * its first operand, when no option before it names the code inline (`-c`,
 * `-e`, `-m`, …). Undefined for any other command.
 */
export function scriptOperand(command: SimpleCommand): string | undefined {
  const name = basename(command.program);
  if (!INTERPRETERS.test(name)) return undefined;
  const args = command.argv.slice(1);
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') return asPath(args[i + 1]);
    if (a.startsWith('-') || a.startsWith('+')) {
      const inline = SHELL_NAMES.test(name) ? /^-[a-zA-Z]*c/ : /^-[a-zA-Z]*[cemEp]/;
      if (inline.test(a)) return undefined;
      if (/^[-+][a-zA-Z]*[oO]$/.test(a)) i++;
      continue;
    }
    return asPath(a);
  }
  return undefined;
}

function asPath(word: string | undefined): string | undefined {
  if (word === undefined || word === '') return undefined;
  return word.includes('/') ? word : `./${word}`;
}
