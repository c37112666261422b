/**
 * Why a path or write pattern cannot be what its author meant, or `null`:
 * an unbalanced `[`, `{` or `(` (or a closing `]`, `}`, `)` with no
 * opening). picomatch reads `~/.ssh/[id` as the literal text `[id`, so a
 * deny rule written that way would protect nothing; the loader refuses it.
 * A backslash escapes the next character; inside `[…]` the characters
 * `{`, `(`, `}` and `)` are literal, and a `]` right after `[`, `[!` or
 * `[^` is part of the class (as in bash and picomatch).
 */
export function unbalancedGlob(pattern: string): string | null {
  const open: { char: string; at: number }[] = [];
  const closing: Record<string, string> = { '}': '{', ')': '(' };
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === '\\') {
      i++;
      continue;
    }
    if (ch === '[') {
      let j = i + 1;
      if (pattern[j] === '!' || pattern[j] === '^') j++;
      if (pattern[j] === ']') j++;
      while (j < pattern.length && pattern[j] !== ']') j += pattern[j] === '\\' ? 2 : 1;
      if (j >= pattern.length) return `unclosed "[" at character ${i + 1}`;
      i = j;
      continue;
    }
    if (ch === ']') return `"]" at character ${i + 1} closes no "["`;
    if (ch === '{' || ch === '(') open.push({ char: ch, at: i });
    else if (ch === '}' || ch === ')') {
      const last = open.pop();
      if (last === undefined || last.char !== closing[ch]) {
        return `"${ch}" at character ${i + 1} closes no "${closing[ch]}"`;
      }
    }
  }
  const left = open.at(-1);
  return left === undefined ? null : `unclosed "${left.char}" at character ${left.at + 1}`;
}
