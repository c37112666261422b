import { createHash } from 'node:crypto';

/**
 * What an attacker with write access to the file can do: rewrite records and
 * recompute every hash after them, so that the chain verifies again. Takes
 * the file's lines (no newlines), replaces line `index` with `edit(record)`
 * and re-seals it and every later line. Returns the new lines.
 */
export function rewriteFrom(
  lines: readonly string[],
  index: number,
  edit: (record: Record<string, unknown>) => Record<string, unknown> | null,
): string[] {
  const out = lines.slice(0, index);
  let prev = index === 0 ? null : (JSON.parse(lines[index - 1]!) as { hash: string }).hash;
  let seq = index === 0 ? 0 : (JSON.parse(lines[index - 1]!) as { seq: number }).seq;
  for (const [n, line] of lines.slice(index).entries()) {
    const parsed = JSON.parse(line) as Record<string, unknown>;
    const record = n === 0 ? edit(parsed) : parsed;
    if (record === null) continue;
    const { hash: _old, ...rest } = record;
    seq += 1;
    const body = JSON.stringify({ ...rest, seq, prev_hash: prev ?? rest.prev_hash });
    const hash = createHash('sha256')
      .update(`${prev ?? (rest.prev_hash as string)}\n`)
      .update(body)
      .digest('hex');
    out.push(`${body.slice(0, -1)},"hash":"${hash}"}`);
    prev = hash;
  }
  return out;
}
