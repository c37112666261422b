import type { Node } from 'web-tree-sitter';
import { decodeAnsiC } from './ansi-c.js';

/*
 * Quotes in arithmetic contexts (`$(( ))`, `$[ ]`, `(( ))`, `for (( ))`,
 * and the operands of `[[ … -eq … ]]`): bash expands `$(…)` and backquotes
 * inside `'…'` and `$'…'` there, while tree-sitter reads those strings as
 * literal text.
 */

/** Quoted string node kinds. */
export const QUOTED_STRINGS = new Set(['raw_string', 'ansi_c_string', 'string', 'translated_string']);

/** The first `'…'`/`$'…'` below `node` whose text (or decoding) holds a `$` or backquote. */
export function findQuotedDollar(node: Node): Node | null {
  for (const child of node.namedChildren) {
    if (!child) continue;
    if (child.type === 'raw_string' || child.type === 'ansi_c_string') {
      const decoded = child.type === 'ansi_c_string' ? decodeAnsiC(child.text.slice(2, -1)) : '';
      if (/[$`]/.test(child.text) || decoded === null || /[$`]/.test(decoded)) return child;
      continue;
    }
    const found = findQuotedDollar(child);
    if (found) return found;
  }
  return null;
}
