const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  a: '\x07',
  b: '\b',
  e: '\x1b',
  E: '\x1b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '?': '?',
};

/**
 * Decodes the body of a bash ANSI-C quoted string (`$'…'` without the
 * `$'` and `'`), as bash 5 does: `\n`-style escapes, `\xHH`, `\uHHHH`,
 * `\UHHHHHHHH`, `\NNN` octal and `\cX` control characters. An unknown escape
 * keeps its backslash. Returns `null` when decoding yields a NUL, which bash
 * would truncate at; the caller treats that word as not literal.
 */
export function decodeAnsiC(body: string): string | null {
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const ch = body[i]!;
    if (ch !== '\\' || i + 1 >= body.length) {
      out += ch;
      continue;
    }
    const next = body[i + 1]!;
    const simple = SIMPLE_ESCAPES[next];
    if (simple !== undefined) {
      out += simple;
      i++;
      continue;
    }
    const hex = (max: number): number => {
      let j = i + 2;
      while (j < body.length && j < i + 2 + max && /[0-9a-fA-F]/.test(body[j]!)) j++;
      return j;
    };
    if (next === 'x' || next === 'u' || next === 'U') {
      const end = hex(next === 'x' ? 2 : next === 'u' ? 4 : 8);
      if (end === i + 2) {
        out += `\\${next}`;
        i++;
        continue;
      }
      const code = Number.parseInt(body.slice(i + 2, end), 16);
      if (code === 0 || code > 0x10ffff) return null;
      out += String.fromCodePoint(code);
      i = end - 1;
      continue;
    }
    if (/[0-7]/.test(next)) {
      let j = i + 1;
      while (j < body.length && j < i + 4 && /[0-7]/.test(body[j]!)) j++;
      const code = Number.parseInt(body.slice(i + 1, j), 8) & 0xff;
      if (code === 0) return null;
      out += String.fromCharCode(code);
      i = j - 1;
      continue;
    }
    if (next === 'c' && i + 2 < body.length) {
      const code = body.charCodeAt(i + 2) & 0x1f;
      if (code === 0) return null;
      out += String.fromCharCode(code);
      i += 2;
      continue;
    }
    out += `\\${next}`;
    i++;
  }
  return out;
}
