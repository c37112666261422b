import type { Node } from 'web-tree-sitter';
import type { Token } from './analysis.js';
import { decodeAnsiC } from './ansi-c.js';

interface Piece {
  text: string;
  literal: boolean;
  glob: boolean;
  /** Unquoted characters as written; quoted or escaped ones become `_` (for brace detection). */
  skeleton: string;
}

const BRACE = /\{[^{}]*(,|\.\.)[^{}]*\}/;

/**
 * Unquotes one shell word (or several adjacent word nodes with no blank
 * between them, which bash reads as one word) the way bash would before
 * running it: `\rm`, `r''m`, `"rm"`, `'r'"m"` and `$'\x72m'` all become `rm`.
 * A word whose value depends on an expansion is returned with
 * `literal: false` and its source text.
 */
export function wordToken(nodes: readonly Node[]): Token {
  const first = nodes[0]!;
  const last = nodes[nodes.length - 1]!;
  let text = '';
  let literal = true;
  let glob = false;
  let skeleton = '';
  for (const piece of nodes.map(unquoteEach)) {
    text += piece.text;
    literal &&= piece.literal;
    glob ||= piece.glob;
    skeleton += piece.skeleton;
  }
  const source = nodes.map((n) => n.text).join('');
  const tilde = /^~|^[A-Za-z_][A-Za-z0-9_]*=~/.test(skeleton);
  return {
    text: literal ? text : source,
    literal,
    glob,
    brace: BRACE.test(skeleton),
    ...(tilde ? { tilde } : {}),
    range: [first.startIndex, last.endIndex],
  };
}

const NOTHING: Piece = { text: '', literal: true, glob: false, skeleton: '' };

/**
 * `unquote` for one of a run of adjacent nodes. A `$` right before a
 * double-quoted string is bash's `$"…"` translation prefix, not a
 * character: `rm $"/"` removes `/`.
 */
function unquoteEach(node: Node, index: number, run: readonly Node[]): Piece {
  const next = run[index + 1];
  if (node.type === '$' && next?.type === 'string' && next.startIndex === node.endIndex) return NOTHING;
  return unquote(node);
}

function unquote(node: Node): Piece {
  switch (node.type) {
    case 'word':
      return unquoteBare(node.text);
    case 'number':
      return { text: node.text, literal: true, glob: false, skeleton: node.text };
    case 'raw_string': {
      const body = node.text.slice(1, -1);
      return { text: body, literal: true, glob: false, skeleton: '_'.repeat(body.length) };
    }
    case 'ansi_c_string': {
      const decoded = decodeAnsiC(node.text.slice(2, -1));
      return decoded === null
        ? { text: node.text, literal: false, glob: false, skeleton: '_' }
        : { text: decoded, literal: true, glob: false, skeleton: '_'.repeat(decoded.length) };
    }
    case 'string':
    case 'translated_string':
      return unquoteDouble(node);
    case 'concatenation': {
      const parts = node.children.filter((c): c is Node => c !== null).map(unquoteEach);
      return {
        text: parts.map((p) => p.text).join(''),
        literal: parts.every((p) => p.literal),
        glob: parts.some((p) => p.glob),
        skeleton: parts.map((p) => p.skeleton).join(''),
      };
    }
    case 'brace_expression':
      return { text: node.text, literal: true, glob: false, skeleton: '{0..1}' };
    case '$':
      return { text: '$', literal: true, glob: false, skeleton: '_' };
    default:
      return { text: node.text, literal: false, glob: false, skeleton: '_' };
  }
}

/** An unquoted word: backslash escapes the next character, `\`+newline vanishes. */
function unquoteBare(raw: string): Piece {
  let text = '';
  let skeleton = '';
  let glob = false;
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i]!;
    if (ch === '\\' && i + 1 < raw.length) {
      const next = raw[++i]!;
      if (next !== '\n') {
        text += next;
        skeleton += '_';
      }
      continue;
    }
    if (ch === '*' || ch === '?' || ch === '[') glob = true;
    if ((ch === '@' || ch === '!' || ch === '+') && raw[i + 1] === '(') glob = true;
    text += ch;
    skeleton += ch;
  }
  return { text, literal: true, glob, skeleton };
}

/** Inside double quotes only `\$`, `` \` ``, `\"`, `\\` and `\`+newline are escapes. */
function unquoteDouble(node: Node): Piece {
  let text = '';
  let literal = true;
  for (const [index, child] of node.children.entries()) {
    if (!child) continue;
    // `$"…"` (translated_string): the leading `$` is the prefix, not text.
    if (index === 0 && node.type === 'translated_string' && child.type === '$') continue;
    if (child.type === 'string_content') {
      text += unescapeDouble(child.text);
    } else if (child.type === '$') {
      text += '$';
    } else if (child.type === '"' || child.type === '$"') {
      // quote marks
    } else if (child.type === 'string') {
      text += unquoteDouble(child).text;
    } else {
      literal = false;
    }
  }
  return { text: literal ? text : node.text, literal, glob: false, skeleton: '_' };
}

function unescapeDouble(raw: string): string {
  let out = '';
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i]!;
    const next = raw[i + 1];
    if (ch === '\\' && next !== undefined && '$`"\\\n'.includes(next)) {
      if (next !== '\n') out += next;
      i++;
      continue;
    }
    out += ch;
  }
  return out;
}
