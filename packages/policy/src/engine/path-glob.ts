import picomatch from 'picomatch';

/**
 * Path globs for rules (`path:`), with picomatch's syntax: `*` and `?`
 * stay inside one path segment, `**` spans segments, `[…]`, `{a,b}` and
 * extglobs (`!(*.pub)`) work, and a leading dot is matched like any other
 * character (`~/.ssh/**` sees `id_rsa` and `.hidden`).
 */
export function compilePathGlob(pattern: string): (path: string) => boolean {
  const re = compilePathGlobs([pattern]);
  return (path) => re.test(path);
}

/**
 * One regex matching any of the globs: a path is tested once per rule, not
 * once per pattern (picomatch's own matcher also re-formats its input on
 * every call).
 */
export function compilePathGlobs(patterns: readonly string[]): RegExp {
  const sources = patterns.map((p) => `(?:${picomatch.makeRe(p, { dot: true }).source})`);
  return new RegExp(sources.join('|'));
}

/** Path segments of an absolute or relative path glob (no empty segments). */
export function segments(path: string): string[] {
  return path.split('/').filter((s) => s !== '');
}

/**
 * Could one path match both globs? An over-approximation, segment by
 * segment: two segments may meet when either, read as a glob, matches the
 * other's text; `**` in either spans any number of segments. Used where a
 * path is only known as a glob (one that matched nothing when judged, or a
 * relative path below an unknown directory, `**` + path).
 */
export function globsMayMeet(a: readonly string[], b: readonly string[]): boolean {
  const memo = new Map<string, boolean>();
  const meet = (i: number, j: number): boolean => {
    const key = `${i},${j}`;
    const known = memo.get(key);
    if (known !== undefined) return known;
    let result: boolean;
    if (i === a.length && j === b.length) result = true;
    else if (i < a.length && a[i] === '**') result = meet(i + 1, j) || (j < b.length && meet(i, j + 1));
    else if (j < b.length && b[j] === '**') result = meet(i, j + 1) || (i < a.length && meet(i + 1, j));
    else if (i === a.length || j === b.length) result = false;
    else result = segmentsMeet(a[i]!, b[j]!) && meet(i + 1, j + 1);
    memo.set(key, result);
    return result;
  };
  return meet(0, 0);
}

function segmentsMeet(x: string, y: string): boolean {
  if (x === y) return true;
  return picomatch.isMatch(y, x, { dot: true }) || picomatch.isMatch(x, y, { dot: true });
}
