import type { Node } from 'web-tree-sitter';
import { decodeAnsiC } from './ansi-c.js';
import { findQuotedDollar } from './arithmetic-quotes.js';
import type { Finding } from './syntax-nodes.js';

/**
 * Checks for the places where tree-sitter-bash reads a line differently from
 * bash: what the parser takes for plain text, bash expands (or runs). Each
 * finding is `unparseable`, so `allowDynamic` never lets it through. The
 * bash manual's "Shell Expansions" and "Command Substitution"
 * (https://www.gnu.org/software/bash/manual/bash.html#Shell-Expansions) say
 * what bash does; the cases are in test/corpus/bash-gaps.corpus.yaml.
 */

/**
 * Leaves whose text bash still expands: an unescaped `$(`, `${` or backquote
 * in them is a parser gap. A `number` is one when tree-sitter reads a
 * base-N constant (`2#$(cmd)`) as a number: bash expands the word first.
 */
const EXPANDING_LEAVES = new Set([
  'word',
  'string_content',
  'extglob_pattern',
  'regex',
  'heredoc_content',
  'number',
]);

/**
 * Bash reserved words (less `time` and `coproc`, judged as wrappers). The
 * grammar has no `time` keyword and mis-reads `! if …`, so after `!` or `time`
 * a compound command comes back as simple commands named `{`, `if`, `then`, …
 * whose bodies would be judged as arguments. Such a command name is refused.
 */
const RESERVED_WORDS = new Set([
  '!',
  'case',
  'do',
  'done',
  'elif',
  'else',
  'esac',
  'fi',
  'for',
  'function',
  'if',
  'in',
  'select',
  'then',
  'until',
  'while',
  '{',
  '}',
  '[[',
  ']]',
]);

/** Why a command named `program` shows a parser misreading, or null. */
export function reservedWordMessage(program: string): string | null {
  return RESERVED_WORDS.has(program)
    ? `the reserved word \`${program}\` in command position (the parser did not read it as syntax)`
    : null;
}

/** A leaf (of kind `type`) whose text bash would expand though the parser read it as plain text. */
export function plainTextExpansion(leaf: Node): Finding | null {
  if (!EXPANDING_LEAVES.has(leaf.type) || !hasActiveSubstitution(leaf.text)) return null;
  return {
    kind: 'unparseable',
    message: `the parser read \`${leaf.text}\` as plain text, but bash would expand it`,
    at: leaf,
  };
}

/** A backquoted `command_substitution` that bash reads as more, or other, than the parser does. */
export function backquoteMisreadings(substitution: Node): Finding[] {
  const text = substitution.text;
  if (!text.startsWith('`')) return [];
  const out: Finding[] = [];
  if (text.slice(1, -1).includes('`')) {
    // `a``b`: bash runs two substitutions; tree-sitter reads one.
    out.push({
      kind: 'unparseable',
      message: 'adjacent backquote substitutions (bash runs each; the parser reads one)',
      at: substitution,
    });
  }
  if (text.slice(1, -1).includes('\\')) {
    out.push({
      kind: 'unparseable',
      message: 'a backslash inside backquotes (bash re-reads it there; the parser does not)',
      at: substitution,
    });
  }
  return out;
}

/**
 * An unquoted here-document `heredoc_body`: bash expands it, and
 * tree-sitter-bash misses substitutions in some bodies (backquotes,
 * tab-indented lines), so unless every `$(`/backquote written in the body
 * was modeled, it is refused. (A body under a quoted delimiter is literal:
 * the caller does not ask.)
 */
export function unmodeledHeredocSubstitutions(body: Node): Finding | null {
  const written = countSubstitutions(body.text);
  const modeled = { dollar: 0, backquote: 0 };
  countModeled(body, modeled);
  if (written.dollar <= modeled.dollar && written.backquote <= modeled.backquote) return null;
  return {
    kind: 'unparseable',
    message:
      "a here-document body with substitutions the parser did not model (quote the delimiter: <<'EOF')",
    at: body,
  };
}

/**
 * Inside a double-quoted `"${x:-'…'}"` (also `:=`, `+`, …) bash keeps the
 * single quotes as characters and still expands what they enclose, and it
 * decodes `$'…'` there and expands the result; tree-sitter-bash reads
 * both as literal strings. A quoted string in `${…}` (the `expansion`)
 * that holds (or decodes to) a `$` or backquote is refused.
 */
export function quotedInExpansion(expansion: Node): Finding[] {
  const out: Finding[] = [];
  const visit = (node: Node): void => {
    for (const child of node.namedChildren) {
      if (!child) continue;
      if (child.type === 'raw_string' || child.type === 'ansi_c_string') {
        const decoded = child.type === 'ansi_c_string' ? decodeAnsiC(child.text.slice(2, -1)) : '';
        if (/[$`]/.test(child.text) || decoded === null || /[$`]/.test(decoded)) {
          out.push({
            kind: 'unparseable',
            message: `a quoted string in \`${expansion.text}\` that bash may expand (the parser reads it as literal)`,
            at: child,
          });
        }
      } else {
        visit(child);
      }
    }
  };
  visit(expansion);
  return out;
}

/**
 * A single-quoted or `$'…'` string with a `$` or backquote in an
 * arithmetic context (`node`): bash expands it there, the parser does not.
 */
export function quotedInArithmetic(node: Node): Finding | null {
  const quoted = findQuotedDollar(node);
  if (!quoted) return null;
  return {
    kind: 'unparseable',
    message: `a quoted string \`${quoted.text}\` evaluated as arithmetic (bash expands what it holds; the parser does not)`,
    at: quoted,
  };
}

/** Unescaped `$(` (incl. `$((`) and backquote pairs written in a here-document body. */
function countSubstitutions(text: string): { dollar: number; backquote: number } {
  let dollar = 0;
  let backquotes = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\\') i++;
    else if (ch === '$' && text[i + 1] === '(') dollar++;
    else if (ch === '`') backquotes++;
  }
  return { dollar, backquote: Math.ceil(backquotes / 2) };
}

function countModeled(node: Node, into: { dollar: number; backquote: number }): void {
  for (const child of node.namedChildren) {
    if (!child) continue;
    if (child.type === 'command_substitution' || child.type === 'arithmetic_expansion') {
      if (child.text.startsWith('`')) into.backquote++;
      else into.dollar++;
    }
    countModeled(child, into);
  }
}

/** An unescaped backquote, `$(`, `${` or `$[` (something bash would expand). */
function hasActiveSubstitution(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\\') i++;
    else if (ch === '`') return true;
    else if (ch === '$' && (text[i + 1] === '(' || text[i + 1] === '{' || text[i + 1] === '[')) return true;
  }
  return false;
}
