import { LosslessNumber } from 'lossless-json';

/**
 * Exact JSON-RPC ids. `JSON.parse` turns `9007199254740993` into
 * `9007199254740992`, `1e-400` into `0` and `1e2` into `100`; a response must
 * echo the id the peer sent, byte for byte. A top-level numeric `id` is
 * therefore carried as a {@link LosslessNumber} holding its exact text, and
 * written back as that text.
 *
 * Why not parse every line with lossless-json: it is a JavaScript parser,
 * measured at ~330 ms for a 4 MiB line against ~6 ms for `JSON.parse`. Only
 * the id needs its text, so the line is parsed (and validated) by `JSON.parse`
 * and the id's token is then located by a scan over the top-level members of
 * that already-valid text (strings are skipped with `indexOf`), and checked by
 * `LosslessNumber`'s constructor. `instanceof LosslessNumber` cannot be forged
 * from JSON, so only such a token is ever written raw.
 */
export function withExactId(text: string, message: unknown): unknown {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return message;
  const record = message as Record<string, unknown>;
  if (typeof record.id !== 'number') return message;
  const token = topLevelMemberText(text, 'id');
  if (token === undefined) return message;
  return { ...record, id: new LosslessNumber(token) };
}

/** One line of JSON for `message`; a top-level `id` that is a {@link LosslessNumber} is written as its text. */
export function stringifyMessage(message: unknown): string {
  if (typeof message === 'object' && message !== null && !Array.isArray(message)) {
    const { id, ...rest } = message as Record<string, unknown>;
    if (id instanceof LosslessNumber) {
      const body = JSON.stringify(rest, nestedNumbers);
      return body === '{}' ? `{"id":${id.value}}` : `{"id":${id.value},${body.slice(1)}`;
    }
  }
  return JSON.stringify(message, nestedNumbers);
}

/** A `LosslessNumber` below the top level (an id echoed inside `_meta`, say) is written as a JSON number. */
function nestedNumbers(_key: string, value: unknown): unknown {
  return value instanceof LosslessNumber ? Number(value.value) : value;
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);

/**
 * The source text of member `name` of the top-level object in `text`, which
 * must be valid JSON (`JSON.parse` accepted it). As in `JSON.parse`, the last
 * of duplicate members wins, and keys are compared after unescaping.
 */
export function topLevelMemberText(text: string, name: string): string | undefined {
  let i = skipWhitespace(text, 0);
  if (text[i] !== '{') return undefined;
  i++;
  let found: string | undefined;
  for (;;) {
    i = skipWhitespace(text, i);
    if (text[i] === '}' || i >= text.length) return found;
    const keyEnd = stringEnd(text, i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    i = skipWhitespace(text, keyEnd) + 1; // the ':'
    i = skipWhitespace(text, i);
    const valueEnd = valueEndAt(text, i);
    if (key === name) found = text.slice(i, valueEnd);
    i = skipWhitespace(text, valueEnd);
    if (text[i] === ',') i++;
  }
}

function skipWhitespace(text: string, from: number): number {
  let i = from;
  while (i < text.length && WHITESPACE.has(text[i]!)) i++;
  return i;
}

/** Index just past the string starting at `start` (a `"`). */
function stringEnd(text: string, start: number): number {
  let from = start + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote === -1) return text.length;
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/** Index just past the JSON value starting at `start`. */
function valueEndAt(text: string, start: number): number {
  const first = text[start];
  if (first === '"') return stringEnd(text, start);
  if (first === '{' || first === '[') {
    let depth = 0;
    let i = start;
    while (i < text.length) {
      const c = text[i];
      if (c === '"') {
        i = stringEnd(text, i);
        continue;
      }
      if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') {
        depth--;
        if (depth === 0) return i + 1;
      }
      i++;
    }
    return i;
  }
  let i = start;
  while (i < text.length && !WHITESPACE.has(text[i]!) && text[i] !== ',' && text[i] !== '}') i++;
  return i;
}
