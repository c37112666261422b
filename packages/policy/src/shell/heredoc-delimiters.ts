import type { Node, Tree } from 'web-tree-sitter';
import { type BashParser, ParseBudgetError } from './bash-grammar.js';

/** Characters that end an unquoted shell word. */
const WORD_END = new Set([' ', '\t', '\n', ';', '&', '|', '<', '>', '(', ')']);

/**
 * tree-sitter-bash reads a here-document delimiter that is only partly
 * quoted (`<<E"O"F`, `<<'E'OF`, `<<E\'O\'F`) as a shorter word plus an
 * argument, and then never finds the end of the body. Bash removes the
 * quotes (`EOF`) and, because some part was quoted, takes the body
 * literally, exactly as for `<<'EOF'`.
 *
 * Returns `source` with each such delimiter (found at a `heredoc_start`
 * the first parse located right after `<<`, so never inside a string) rewritten as
 * `'EOF'`, padded with blanks after the closing quote so every byte offset
 * stays where it was; `null` when there is nothing to rewrite, or a
 * delimiter cannot be rewritten (it holds a `'`, `$'…'`, or is shorter
 * once quoted).
 */
export function requoteHeredocDelimiters(source: string, root: Node): string | null {
  const starts: Node[] = [];
  collect(root, starts);
  let out = source;
  let changed = false;
  for (const node of starts) {
    const at = node.startIndex;
    // The delimiter must follow `<<` or `<<-` (and blanks), as bash requires.
    let op = at;
    while (op > 0 && (source[op - 1] === ' ' || source[op - 1] === '\t')) op--;
    if (source[op - 1] === '-') op--;
    if (source.slice(op - 2, op) !== '<<' || source[op - 3] === '<') continue;
    const word = readWord(source, at);
    if (word === null || !word.quoted) continue;
    if (word.value.includes("'") || word.value === '') return null;
    const quoted = `'${word.value}'`;
    const length = word.end - at;
    if (quoted.length > length) return null;
    if (source.slice(at, word.end) === quoted.padEnd(length, ' ')) continue;
    out = out.slice(0, at) + quoted.padEnd(length, ' ') + out.slice(word.end);
    changed = true;
  }
  return changed ? out : null;
}

function collect(node: Node, into: Node[]): void {
  if (node.type === 'heredoc_start') into.push(node);
  for (const child of node.namedChildren) if (child) collect(child, into);
}

/** One shell word starting at `start`, quotes removed; null on anything but plain, `'…'`, `"…"` and `\x` parts. */
function readWord(source: string, start: number): { value: string; end: number; quoted: boolean } | null {
  let value = '';
  let quoted = false;
  let i = start;
  while (i < source.length && !WORD_END.has(source[i]!)) {
    const ch = source[i]!;
    if (ch === '\\') {
      if (i + 1 >= source.length || source[i + 1] === '\n') return null;
      value += source[i + 1];
      quoted = true;
      i += 2;
    } else if (ch === "'") {
      const close = source.indexOf("'", i + 1);
      if (close === -1) return null;
      value += source.slice(i + 1, close);
      quoted = true;
      i = close + 1;
    } else if (ch === '"') {
      i++;
      for (; i < source.length && source[i] !== '"'; i++) {
        const c = source[i]!;
        if (c === '$' || c === '`') return null;
        if (c === '\\' && '"\\'.includes(source[i + 1] ?? '')) i++;
        value += source[i];
      }
      if (i >= source.length) return null;
      quoted = true;
      i++;
    } else if (ch === '$' || ch === '`') {
      return null;
    } else {
      value += ch;
      i++;
    }
  }
  return { value, end: i, quoted };
}

/**
 * When `tree` (the parse of `source`) failed and a partly quoted
 * here-document delimiter is to blame, the tree of the same source with it
 * re-quoted (offsets kept); otherwise `tree`. Deletes whichever tree it
 * does not return.
 */
export function reparseRequoted(parser: BashParser, source: string, tree: Tree): Tree {
  const requoted = tree.rootNode.hasError ? requoteHeredocDelimiters(source, tree.rootNode) : null;
  if (requoted === null) return tree;
  let again: Tree;
  try {
    again = parser.parse(requoted);
  } catch (error) {
    if (!(error instanceof ParseBudgetError)) {
      tree.delete();
      throw error;
    }
    return tree;
  }
  if (again.rootNode.hasError) {
    again.delete();
    return tree;
  }
  tree.delete();
  return again;
}
