import { type Document, isMap, isScalar, type LineCounter } from 'yaml';
import type { SourcePosition } from './policy-types.js';

/** A JSON-pointer-like path into the document: keys and sequence indexes. */
export type DocPath = readonly (string | number)[];

/** Parses an ajv `instancePath` (`/rules/2/decision`) into a document path. */
export function parseInstancePath(instancePath: string): DocPath {
  if (instancePath === '') return [];
  return instancePath
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

/** `rules[2].decision`: the key as a reader would name it. */
export function formatPath(path: DocPath): string {
  let out = '';
  for (const part of path) out += typeof part === 'number' ? `[${part}]` : out === '' ? part : `.${part}`;
  return out;
}

/**
 * Position of the value at `path`, or of the key `key` inside the map at
 * `path` when given (for unknown keys). Falls back to the nearest ancestor
 * that exists, then to line 1, column 1.
 */
export function locate(doc: Document, lines: LineCounter, path: DocPath, key?: string): SourcePosition {
  for (let depth = path.length; depth >= 0; depth--) {
    const node = (depth === 0 ? doc.contents : doc.getIn(path.slice(0, depth), true)) as {
      range?: readonly [number, number, number];
    } | null;
    if (!node || typeof node !== 'object' || !node.range) continue;
    if (key !== undefined && depth === path.length && isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && p.key.value === key);
      if (pair && isScalar(pair.key) && pair.key.range) return toPosition(lines, pair.key.range[0]);
    }
    return toPosition(lines, node.range[0]);
  }
  return { line: 1, column: 1 };
}

export function toPosition(lines: LineCounter, offset: number): SourcePosition {
  const { line, col } = lines.linePos(offset);
  return { line, column: col };
}
