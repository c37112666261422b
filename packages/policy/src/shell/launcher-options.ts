import { literalToken, type Token } from './analysis.js';
import type { Unwrapped } from './unwrapped.js';

/*
 * Launchers whose option values name commands they run with `sh -c` (tar,
 * ssh, rsync) or makefile text (make). See `unwrapLauncher`.
 */

/** `--name=value` → [`--name`, `value`]; any other word → [word, undefined]. */
export function splitOption(word: string): [string, string | undefined] {
  const eq = word.indexOf('=');
  return eq === -1 || !word.startsWith('--') ? [word, undefined] : [word.slice(0, eq), word.slice(eq + 1)];
}

/** tar options whose value is a command tar runs with `sh -c` (long names; tar takes unambiguous abbreviations). */
const TAR_COMMANDS = [
  'to-command',
  'use-compress-program',
  'info-script',
  'new-volume-script',
  'rsh-command',
  'rmt-command',
];
/** tar long options that are the exact name of something else, sharing a prefix with one above. */
const TAR_EXACT = new Set(['to-stdout', 'totals', 'touch', 'checkpoint', 'utc', 'unlink-first']);
/** tar short options that take a value (`-I PROG` and `-F SCRIPT` run one). */
const TAR_VALUED = 'bCfFgHIKLNTVX';

/** `tar … --to-command=CMD`, `-I CMD`, `--use-compress-program CMD`, `--checkpoint-action=exec=CMD`. */
export function tar(name: string, argv: readonly Token[]): Unwrapped | null {
  const none: Unwrapped = { via: `${name} command`, run: [], scripts: [], assignments: [] };
  const scripts: Token[] = [];
  for (let i = 1; i < argv.length; i++) {
    const token = argv[i]!;
    const word = token.text;
    if (i === 1 && token.literal && !word.startsWith('-') && /[IF]/.test(word)) {
      return {
        ...none,
        problem: `${name}: old-style options \`${word}\` with I or F (a program to run) are not judged`,
      };
    }
    if (!token.literal) continue;
    if (word === '--') break;
    if (word.startsWith('--')) {
      const [option, value] = splitOption(word);
      const long = option.slice(2);
      const next = (): Token | undefined => (value !== undefined ? { ...token, text: value } : argv[++i]);
      if (long.length >= 3 && !TAR_EXACT.has(long) && TAR_COMMANDS.some((c) => c.startsWith(long))) {
        const v = next();
        if (v) scripts.push(v);
      } else if (long.length >= 12 && 'checkpoint-action'.startsWith(long)) {
        const v = next();
        if (v && !v.literal) return { ...none, dynamic: `${name}: \`${option}\` is built from an expansion` };
        if (v && /^exec=/.test(v.text)) scripts.push({ ...v, text: v.text.slice('exec='.length) });
      }
      continue;
    }
    if (!word.startsWith('-') || word === '-') continue;
    for (let k = 1; k < word.length; k++) {
      const letter = word[k]!;
      if (!TAR_VALUED.includes(letter)) continue;
      const attached = word.slice(k + 1);
      const v = attached !== '' ? { ...token, text: attached } : argv[++i];
      if ((letter === 'I' || letter === 'F') && v) scripts.push(v);
      break;
    }
  }
  return scripts.length > 0 ? { ...none, scripts } : null;
}

/** `make --eval=TEXT` and `SHELL=…` operands: makefile text and a shell the policy does not see. */
export function make(name: string, argv: readonly Token[]): Unwrapped | null {
  const none: Unwrapped = { via: name, run: [], scripts: [], assignments: [] };
  for (let i = 1; i < argv.length; i++) {
    const word = argv[i]!.text;
    if (/^--ev/.test(word) || /^-[a-zA-Z]*E/.test(word)) {
      return {
        ...none,
        dynamic: `${name}: \`${word}\` evaluates makefile text, whose recipes run commands not judged`,
      };
    }
    if (/^(SHELL|\.SHELLFLAGS|MAKESHELL)[:+?]?=/.test(word)) {
      return { ...none, dynamic: `${name}: \`${word}\` chooses the program every recipe runs with` };
    }
  }
  return null;
}

const SSH_VALUED = 'BbcDEeFIiJLlmOoPpQRSWw';
/** ssh options (any case) whose value is a command run on this machine. */
const SSH_COMMANDS = /^(proxycommand|localcommand|knownhostscommand)$/i;

/** `ssh -o ProxyCommand=CMD`, `-o LocalCommand=CMD`, `scp -S PROG`, `-F CONFIG` (which can hold them). */
export function ssh(name: string, argv: readonly Token[]): Unwrapped | null {
  const none: Unwrapped = { via: `${name} -o`, run: [], scripts: [], assignments: [] };
  const scripts: Token[] = [];
  const run: Token[][] = [];
  for (let i = 1; i < argv.length; i++) {
    const token = argv[i]!;
    const word = token.text;
    if (!word.startsWith('-') || word === '-' || word === '--') break;
    for (let k = 1; k < word.length; k++) {
      const letter = word[k]!;
      if (!SSH_VALUED.includes(letter)) continue;
      const attached = word.slice(k + 1);
      const v = attached !== '' ? { ...token, text: attached } : argv[++i];
      if (!v) break;
      if (letter === 'o') {
        if (!v.literal)
          return { ...none, dynamic: `${name}: the option \`${v.text}\` is built from an expansion` };
        const m = /^\s*([A-Za-z]+)\s*(?:=\s*|\s+)(.*)$/s.exec(v.text);
        if (m && SSH_COMMANDS.test(m[1]!) && m[2]!.trim().toLowerCase() !== 'none') {
          scripts.push(literalToken(m[2]!.replace(/^exec\s+/, '')));
        }
      } else if (letter === 'F' && !(v.literal && v.text === '/dev/null')) {
        return {
          ...none,
          dynamic: `${name}: \`-F ${v.text}\` reads a configuration that can name commands to run (ProxyCommand)`,
        };
      } else if (letter === 'S' && name !== 'ssh') {
        run.push([v]);
      }
      break;
    }
  }
  return scripts.length > 0 || run.length > 0 ? { ...none, scripts, run } : null;
}

/** `rsync -e CMD` / `--rsh=CMD`: the remote shell runs here. */
export function rsync(argv: readonly Token[]): Unwrapped | null {
  const scripts: Token[] = [];
  for (let i = 1; i < argv.length; i++) {
    const token = argv[i]!;
    const word = token.text;
    if (word === '--') break;
    if (word === '--rsh' || word === '-e') {
      if (argv[i + 1]) scripts.push(argv[++i]!);
    } else if (word.startsWith('--rsh=')) scripts.push({ ...token, text: word.slice('--rsh='.length) });
    else if (/^-[a-zA-Z]*e./.test(word) && !word.startsWith('--'))
      scripts.push({ ...token, text: word.slice(word.indexOf('e') + 1) });
    else if (/^-[a-zA-Z]+e$/.test(word) && argv[i + 1]) scripts.push(argv[++i]!);
  }
  return scripts.length > 0 ? { via: 'rsync -e', run: [], scripts, assignments: [] } : null;
}
