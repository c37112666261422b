import { literalToken, type Token } from './analysis.js';
import { canonicalArgv } from './canonical-argv.js';
import { make, rsync, splitOption, ssh, tar } from './launcher-options.js';
import { awkCommands } from './launcher-scripts/awk.js';
import { sedCommands } from './launcher-scripts/sed.js';
import type { Unwrapped } from './unwrapped.js';

/**
 * Programs that run a command named in their own arguments, judged as
 * launchers: what they run is emitted as a command of its own (or a shell
 * string to parse), and what cannot be known is a problem, so that a deny
 * rule on `sudo` holds for `chronic sudo id`, `npx npm publish`,
 * `python3 -m twine upload`, `awk 'BEGIN{system("sudo id")}'`, `sed '1e sudo id'`,
 * `tar --to-command='sudo id'`, `make --eval=…`, `ssh -o ProxyCommand=…`.
 * docs/POLICY-SPELLINGS.md lists them. Returns null for any other program
 * (and for an invocation that runs nothing of its own).
 */
export function unwrapLauncher(name: string, argv: readonly Token[]): Unwrapped | null {
  const none: Unwrapped = { via: name, run: [], scripts: [], assignments: [] };
  const words = argv.map((t) => t.text);
  switch (name) {
    case 'chronic': {
      let i = 1;
      while (argv[i]?.literal && /^-[ev]+$/.test(argv[i]!.text)) i++;
      if (i >= argv.length) return { ...none, problem: 'chronic: missing the command to run' };
      return { ...none, run: [argv.slice(i)] };
    }
    case 'npx':
    case 'pnpx':
    case 'bunx':
      return packageRunner(name, argv, 1);
    case 'npm':
    case 'pnpm':
    case 'yarn':
    case 'bun': {
      const canonical = canonicalArgv(words) ?? words;
      const sub = canonical[1];
      if (sub !== 'dlx' && sub !== 'exec' && sub !== 'x') return null;
      if (name === 'npm' && sub === 'dlx') return null;
      // Where the subcommand is in the words as written (the global options before it dropped).
      const at = words.indexOf(sub, 1);
      return packageRunner(`${name} ${sub}`, argv, at + 1);
    }
    case 'awk':
    case 'gawk':
    case 'mawk':
    case 'nawk':
      return awk(name, argv);
    case 'sed':
    case 'gsed':
      return sed(name, argv);
    case 'tar':
    case 'gtar':
      return tar(name, argv);
    case 'make':
    case 'gmake':
      return make(name, argv);
    case 'ssh':
    case 'scp':
    case 'sftp':
      return ssh(name, argv);
    case 'rsync':
      return rsync(argv);
  }
  if (/^python(\d+(\.\d+)?)?$/.test(name)) return pythonModule(name, argv);
  return null;
}

const PACKAGE_RUNNER_VALUED = new Set([
  '-p',
  '--package',
  '--registry',
  '--cache',
  '--userconfig',
  '--prefix',
]);
const PACKAGE_RUNNER_SCRIPT = new Set(['-c', '--call']);

/**
 * `npx [options] CMD [args]`, `pnpm dlx …`, `npm exec …`, `yarn dlx …`: the
 * package's binary runs, named as the package (`npm@10` → `npm`,
 * `@scope/tool` → `tool`); `-c STRING` runs a shell string.
 */
function packageRunner(via: string, argv: readonly Token[], start: number): Unwrapped {
  const none: Unwrapped = { via, run: [], scripts: [], assignments: [] };
  let i = start;
  const scripts: Token[] = [];
  let shellMode = false;
  for (; i < argv.length; i++) {
    const token = argv[i]!;
    const word = token.text;
    if (!token.literal) {
      if (word.startsWith('-'))
        return { ...none, problem: `${via}: option \`${word}\` is not a literal word` };
      break;
    }
    if (word === '--') {
      i++;
      break;
    }
    if (!word.startsWith('-')) break;
    const [option, value] = splitOption(word);
    if (PACKAGE_RUNNER_SCRIPT.has(option)) {
      const script = value === undefined ? argv[++i] : { ...token, text: value };
      if (!script) return { ...none, problem: `${via}: \`${option}\` without a command string` };
      scripts.push(script);
    } else if (option === '--shell-mode') {
      shellMode = true;
    } else if (PACKAGE_RUNNER_VALUED.has(option) && value === undefined) {
      i++;
    }
  }
  const rest = argv.slice(i);
  if (shellMode && rest.length > 0) {
    if (rest.some((t) => !t.literal))
      return { ...none, dynamic: `${via}: the command string is built from an expansion` };
    return { ...none, scripts: [literalToken(rest.map((t) => t.text).join(' '))] };
  }
  if (rest.length === 0) return { ...none, scripts };
  const program = rest[0]!;
  const bin = program.literal ? { ...program, text: packageBinary(program.text) } : program;
  return { ...none, run: [[bin, ...rest.slice(1)]], scripts };
}

/** `npm@10.1` → `npm`; `@scope/tool@1` → `tool`. */
function packageBinary(spec: string): string {
  const scoped = /^@[^/]+\/(.+)$/.exec(spec);
  const bare = scoped ? scoped[1]! : spec;
  const at = bare.indexOf('@', 1);
  return at === -1 ? bare : bare.slice(0, at);
}

/** `python3 [options] -m MODULE args`: the module runs as a program of that name (`twine upload`). */
function pythonModule(name: string, argv: readonly Token[]): Unwrapped | null {
  for (let i = 1; i < argv.length; i++) {
    const token = argv[i]!;
    const word = token.text;
    if (!token.literal || !word.startsWith('-') || word === '-' || word === '--') return null;
    if (word.startsWith('--')) continue; // --version, --help, …
    for (let k = 1; k < word.length; k++) {
      const letter = word[k]!;
      if (letter === 'c') return null; // code in the argument: the interpreter's own business
      if (letter === 'W' || letter === 'X') {
        if (k === word.length - 1) i++;
        break;
      }
      if (letter === 'm') {
        const attached = word.slice(k + 1);
        const module = attached !== '' ? literalToken(attached) : argv[++i];
        if (!module)
          return {
            via: `${name} -m`,
            run: [],
            scripts: [],
            assignments: [],
            problem: `${name}: \`-m\` without a module`,
          };
        return { via: `${name} -m`, run: [[module, ...argv.slice(i + 1)]], scripts: [], assignments: [] };
      }
    }
  }
  return null;
}

/** `awk [options] 'PROGRAM' files…`: the strings its `system()` and pipes run. */
function awk(name: string, argv: readonly Token[]): Unwrapped | null {
  const none: Unwrapped = { via: `${name} system()`, run: [], scripts: [], assignments: [] };
  const programs: Token[] = [];
  let fromFile = false;
  let i = 1;
  for (; i < argv.length; i++) {
    const token = argv[i]!;
    const word = token.text;
    if (!token.literal || !word.startsWith('-') || word === '-') break;
    if (word === '--') {
      i++;
      break;
    }
    const [option, value] = splitOption(word);
    if (option === '-l' || option === '--load' || word.startsWith('-l')) {
      return { ...none, problem: `${name}: \`${option}\` loads a shared library` };
    }
    if (option === '-e' || option === '--source') {
      const program = value !== undefined ? { ...token, text: value } : argv[++i];
      if (program) programs.push(program);
      continue;
    }
    if (
      option === '-f' ||
      option === '--file' ||
      option === '-E' ||
      option === '--exec' ||
      option === '-i' ||
      option === '--include'
    ) {
      fromFile = true;
      if (value === undefined && word.length === 2) i++;
      continue;
    }
    if (/^-[Fv]./.test(word)) continue;
    if (option === '-F' || option === '-v' || option === '--field-separator' || option === '--assign') {
      if (value === undefined) i++;
    }
  }
  if (programs.length === 0 && !fromFile && argv[i]) programs.push(argv[i]!);
  if (programs.length === 0) return null;
  const scripts: Token[] = [];
  for (const program of programs) {
    if (!program.literal)
      return { ...none, dynamic: `the ${name} program \`${program.text}\` is built from an expansion` };
    const found = awkCommands(program.text);
    if (found.dynamic) return { ...none, dynamic: `${name}: ${found.dynamic}` };
    scripts.push(...found.commands.map((c) => literalToken(c)));
  }
  return scripts.length > 0 ? { ...none, scripts } : null;
}

/** `sed [options] SCRIPT files…`: the commands its `e` command runs; the `e` flag of `s` is refused. */
function sed(name: string, argv: readonly Token[]): Unwrapped | null {
  const none: Unwrapped = { via: `${name} e`, run: [], scripts: [], assignments: [] };
  const scripts: Token[] = [];
  let sandboxed = false;
  let fromFile = false;
  let i = 1;
  for (; i < argv.length; i++) {
    const token = argv[i]!;
    const word = token.text;
    if (!token.literal || !word.startsWith('-') || word === '-') break;
    if (word === '--') {
      i++;
      break;
    }
    const [option, value] = splitOption(word);
    if (option === '--sandbox') sandboxed = true;
    else if (option === '--expression' || option === '--file') {
      const v = value !== undefined ? { ...token, text: value } : argv[++i];
      if (option === '--file') fromFile = true;
      else if (v) scripts.push(v);
    } else if (option === '--line-length') {
      if (value === undefined) i++;
    } else if (!word.startsWith('--')) {
      for (let k = 1; k < word.length; k++) {
        const letter = word[k]!;
        if (letter === 'i') break; // -i[SUFFIX]
        if (letter === 'e' || letter === 'f' || letter === 'l') {
          const attached = word.slice(k + 1);
          const v = attached !== '' ? { ...token, text: attached } : argv[++i];
          if (letter === 'e' && v) scripts.push(v);
          if (letter === 'f') fromFile = true;
          break;
        }
      }
    }
  }
  if (scripts.length === 0 && !fromFile && argv[i]) scripts.push(argv[i]!);
  if (sandboxed || scripts.length === 0) return null;
  const run: Token[] = [];
  for (const script of scripts) {
    if (!script.literal)
      return { ...none, dynamic: `the ${name} script \`${script.text}\` is built from an expansion` };
    const found = sedCommands(script.text);
    if (found.problem) return { ...none, problem: `${name}: ${found.problem}` };
    if (found.dynamic) return { ...none, dynamic: `${name}: ${found.dynamic}` };
    run.push(...found.commands.map((c) => literalToken(c)));
  }
  return run.length > 0 ? { ...none, scripts: run } : null;
}
