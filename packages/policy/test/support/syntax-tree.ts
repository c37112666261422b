import type { Node } from 'web-tree-sitter';
import { type BashParser, loadBashParser } from '../../src/shell/bash-grammar.js';

let parser: BashParser | undefined;

/** The bash parser the analyzer uses (loaded once). */
export async function bashParser(): Promise<BashParser> {
  parser ??= await loadBashParser();
  return parser;
}

/** The root node of `line` as tree-sitter-bash parses it (the tree lives as long as the test file). */
export function rootOf(line: string): Node {
  if (!parser) throw new Error('call bashParser() in beforeAll first');
  return parser.parse(line).rootNode;
}

/** Every node of one of `types` in `line`, in source order, not descending into the ones found. */
export function nodesOf(line: string, ...types: string[]): Node[] {
  const out: Node[] = [];
  const visit = (node: Node): void => {
    if (types.includes(node.type)) {
      out.push(node);
      return;
    }
    for (const child of node.children) if (child) visit(child);
  };
  visit(rootOf(line));
  return out;
}

/** The first node of `type` in `line`; fails the test when there is none. */
export function nodeOf(line: string, type: string): Node {
  const found = nodesOf(line, type)[0];
  if (!found) throw new Error(`no ${type} node in ${JSON.stringify(line)}`);
  return found;
}
