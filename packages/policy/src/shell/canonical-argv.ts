import { basename } from 'node:path';
import { PROGRAM_GRAMMARS, type ProgramGrammar } from './program-grammars.js';

/**
 * The command as its program reads it, with the spelling taken out: the
 * program's basename, then its subcommand words with the global options
 * before them removed (`git -C . -p push` → `git push`, `kubectl -nprod
 * delete pod x` → `kubectl delete pod x`, `cargo +nightly publish` →
 * `cargo publish`, `docker image push x` → `docker push x`), and the rest
 * of the arguments as written. Null when the program has no table or
 * nothing was removed (the argv is its own canonical form).
 *
 * Only deny and ask rules are matched against this form as well as the
 * words as written: a spelling never makes a rule more permissive.
 */
export function canonicalArgv(argv: readonly string[]): string[] | null {
  const program = argv[0];
  if (program === undefined) return null;
  const name = basename(program);
  const grammar = PROGRAM_GRAMMARS[name];
  if (!grammar) return null;
  const out = [name, ...canonicalWords(argv.slice(1), grammar)];
  const same = out.length === argv.length && out.every((w, i) => i === 0 || w === argv[i]);
  return same ? null : out;
}

function canonicalWords(words: readonly string[], grammar: ProgramGrammar): string[] {
  let i = 0;
  if (grammar.plus && words[0]?.startsWith('+')) i = 1;
  while (i < words.length) {
    const word = words[i]!;
    if (word === '--') {
      i++;
      break;
    }
    if (!word.startsWith('-') || word === '-') break;
    i += optionWidth(word, words[i + 1], grammar);
  }
  let rest = words.slice(i);
  const sub = rest[0];
  if (sub !== undefined) {
    const nested = grammar.subcommands?.[sub];
    if (nested) rest = [sub, ...canonicalWords(rest.slice(1), nested)];
    const alias = rest.length >= 2 ? grammar.aliases?.[`${rest[0]} ${rest[1]}`] : undefined;
    if (alias) rest = [...alias, ...rest.slice(2)];
  }
  return rest;
}

/** How many words the option `word` takes up (1, or 2 when its value is the next word). */
function optionWidth(word: string, next: string | undefined, grammar: ProgramGrammar): number {
  const long = grammar.longSingleDash
    ? word.replace(/^--?/, '')
    : word.startsWith('--')
      ? word.slice(2)
      : null;
  if (long !== null) {
    const eq = long.indexOf('=');
    if (eq !== -1) return 1;
    if (grammar.attachedOnly?.includes(long)) return 1;
    return grammar.valued?.long?.includes(long) && next !== undefined ? 2 : 1;
  }
  // A short cluster: flags until the first valued letter, whose value is the rest or the next word.
  for (let k = 1; k < word.length; k++) {
    if (grammar.valued?.short?.includes(word[k]!)) {
      return k === word.length - 1 && next !== undefined ? 2 : 1;
    }
  }
  return 1;
}
