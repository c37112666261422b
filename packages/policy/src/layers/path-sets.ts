import { isAbsolute, relative } from 'node:path';

/** `path` is `root` or lies under it (lexically; both absolute and resolved). */
export function within(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * The paths both lists reach: for each pair, the deeper of the two when one
 * lies inside the other. A path under a root of `a` and a root of `b` is
 * under a root of the result, and nothing else is. Duplicates removed,
 * order of `a` kept.
 */
export function intersectRoots(a: readonly string[], b: readonly string[]): string[] {
  const out: string[] = [];
  for (const x of a) {
    for (const y of b) {
      const deeper = within(x, trimSlash(y)) ? x : within(y, trimSlash(x)) ? y : null;
      if (deeper !== null && !out.includes(deeper)) out.push(deeper);
    }
  }
  return out;
}

/** Both lists, each entry once, `a`'s first. */
export function unite(a: readonly string[], b: readonly string[]): string[] {
  return [...new Set([...a, ...b])];
}

/** The entries of `wanted` no root of `allowed` covers. */
export function outside(wanted: readonly string[], allowed: readonly string[]): string[] {
  return wanted.filter((p) => !allowed.some((root) => within(trimSlash(p), trimSlash(root))));
}

/** `readOnly` marks a directory that does not exist yet with a trailing slash. */
function trimSlash(path: string): string {
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}
