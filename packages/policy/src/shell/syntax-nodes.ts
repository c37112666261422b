import type { Node } from 'web-tree-sitter';

/** Children with their field names, in one pass (`node.child(i)` walks from the first child each time). */
export function fieldedChildren(node: Node): [Node, string | null][] {
  const out: [Node, string | null][] = [];
  const cursor = node.walk();
  try {
    if (cursor.gotoFirstChild()) {
      do out.push([cursor.currentNode, cursor.currentFieldName]);
      while (cursor.gotoNextSibling());
    }
  } finally {
    cursor.delete();
  }
  return out;
}

/** Adjacent word nodes with nothing between them are one shell word (`$"…"`, `a"b"`). */
export function groupNodes(nodes: readonly Node[]): Node[][] {
  const groups: Node[][] = [];
  for (const node of nodes) {
    const last = groups[groups.length - 1];
    const prev = last?.[last.length - 1];
    if (last && prev && prev.endIndex === node.startIndex) last.push(node);
    else groups.push([node]);
  }
  return groups;
}

/** True when a named descendant of `node` has one of `types`. */
export function containsType(node: Node, types: ReadonlySet<string>): boolean {
  return node.namedChildren.some((c) => c !== null && (types.has(c.type) || containsType(c, types)));
}

/**
 * Something a check found at a node: the walk records it as a `Problem`
 * whose range is the node's (or that of the string it was nested in).
 */
export interface Finding {
  readonly kind: 'unparseable' | 'dynamic';
  readonly message: string;
  readonly at: Node;
}
