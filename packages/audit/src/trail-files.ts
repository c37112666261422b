import { lstatSync, readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { parseRotatedName } from './rotation.js';

/**
 * The files of one trail in `dir`, oldest first: its segments
 * (`NAME.<stamp>.EXT`, see `rotation.ts`) in stamp order, then `NAME.EXT`
 * when it is a regular file (a trail that never rotated). The link
 * `NAME.EXT` to the current segment is not listed: its target is.
 * Without segments, the trail is the one regular file in `dir` (`*.jsonl`
 * first). Throws an `Error` naming the trails when `dir` holds more than
 * one, or when it holds none. Lock files and other names are ignored.
 */
export function listTrailDirectory(dir: string): string[] {
  // The link to the current segment (see `rotation.ts`) is skipped: its target is listed.
  const names = readdirSync(dir).filter((name) => lstatSync(join(dir, name)).isFile());
  const groups = new Map<string, { key: string; name: string }[]>();
  for (const name of names) {
    const rotated = parseRotatedName(name);
    if (rotated !== null && !rotated.base.endsWith('.lock')) {
      const group = groups.get(rotated.base) ?? [];
      group.push({ key: rotated.key, name });
      groups.set(rotated.base, group);
    }
  }
  // A trail that never rotated is one regular file; only looked for when there are no segments,
  // so that other files next to segments (a report, notes) do not count.
  if (groups.size === 0) {
    const plain = names.filter((name) => !/\.lock(\.break)?$/.test(name));
    const jsonl = plain.filter((name) => name.endsWith('.jsonl'));
    for (const name of jsonl.length > 0 ? jsonl : plain) groups.set(name, []);
  }
  if (groups.size === 0) throw new Error(`${dir} holds no audit file`);
  if (groups.size > 1) {
    throw new Error(
      `${dir} holds several trails (${[...groups.keys()].sort().join(', ')}): name the files to verify`,
    );
  }
  const [[base, rotated]] = [...groups.entries()] as [[string, { key: string; name: string }[]]];
  const files = rotated
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((r) => join(dir, r.name));
  if (names.includes(base)) files.push(join(dir, base));
  return files;
}

/**
 * The newest segment of `path` next to it (other than `exclude`, a name), or
 * null: where a new active file's chain continues. Only regular files are
 * segments: a link or a directory planted at a segment name (rotation records
 * those as tampering when it meets them) is neither followed nor continued.
 */
export function newestRotatedSibling(path: string, exclude: string | null = null): string | null {
  const dir = dirname(path);
  const base = basename(path);
  let newest: { key: string; name: string } | null = null;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return null;
  }
  for (const name of names) {
    const rotated = parseRotatedName(name);
    if (rotated === null || rotated.base !== base || name === exclude) continue;
    if (newest !== null && rotated.key <= newest.key) continue;
    if (!isRegularFile(join(dir, name))) continue;
    newest = { key: rotated.key, name };
  }
  return newest === null ? null : join(dir, newest.name);
}

function isRegularFile(path: string): boolean {
  try {
    return lstatSync(path).isFile();
  } catch {
    return false;
  }
}
