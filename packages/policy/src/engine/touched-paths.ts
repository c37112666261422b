import { isAbsolute, posix } from 'node:path';
import picomatch from 'picomatch';
import { homeDirectory } from '../policy-file/policy-paths.js';
import type { Token } from '../shell/analysis.js';
import { SandboxView } from './sandbox-view.js';

/** One path a command may touch, as a `path:` rule sees it. */
export interface TouchedPath {
  /** The argument it came from, as written after unquoting. */
  readonly word: string;
  /**
   * Absolute, `~` expanded, `.`/`..` removed as text; or, when `glob` is set,
   * an absolute or relative glob standing for every path it may be.
   */
  readonly path: string;
  /** `path` with existing symlinks resolved (realpath), when it exists and differs; computed on first use. */
  physical(): string | undefined;
  /**
   * Not resolved to one path: a glob that matched nothing when judged, or a
   * relative path below a directory not known in advance (`**` + path).
   */
  readonly glob?: boolean;
}

/** Most matches taken from one glob; past it, the glob itself stands for them. */
const MAX_GLOB_MATCHES = 256;

/**
 * The paths a command's arguments may name: every argument after argv[0]
 * that is not an option word (and the value of a `--name=value` option or
 * a `name=value` operand) is read as a path, relative
 * ones against each directory the line may be in (`dirs`; `null` when
 * unknown). An unquoted leading `~` is the home directory; a glob is
 * expanded against the filesystem now, as bash would (hidden files only for
 * a pattern starting with `.`); one that matches nothing is kept as a glob.
 * Words built from expansions are not paths here (they are dynamic).
 */
export function touchedPaths(
  words: readonly Token[],
  dirs: readonly string[] | null,
  view: SandboxView = SandboxView.HOST,
): TouchedPath[] {
  const out: TouchedPath[] = [];
  for (const raw of words.slice(1)) {
    const token = raw.literal ? raw : homeRelative(raw);
    if (token === null || token.text === '') continue;
    for (const word of candidates(token.text)) {
      const text = token.tilde && /^~(\/|$)/.test(word) ? homeDirectory() + word.slice(1) : word;
      if (token.tilde && /^~[^/]/.test(word)) continue;
      if (isAbsolute(text)) out.push(...resolved(word, text, token.glob, view));
      else if (dirs === null) out.push(unresolved(word, `**/${text}`));
      else for (const dir of dirs) out.push(...resolved(word, posix.join(dir, text), token.glob, view));
    }
  }
  return out;
}

/**
 * `$HOME/…`, `"${HOME}"/…`: a word whose only expansion is a leading HOME
 * is the home directory plus the rest (HOME cannot be set by a line the
 * default policy allows). Other words built from expansions name no path
 * known in advance: null.
 */
function homeRelative(token: Token): Token | null {
  const unquoted = token.text.replaceAll('"', '');
  const m = /^\$(?:HOME|\{HOME\})(\/.*)?$/.exec(unquoted);
  if (!m || /[$`'\\]/.test(m[1] ?? '')) return null;
  const rest = m[1] ?? '';
  return { text: `~${rest}`, literal: true, glob: /[*?[]/.test(rest), brace: false, tilde: true };
}

/**
 * The argument, and the value of `--name=value` or `name=value` (`dd if=FILE`).
 * An option word (`-rf`, `--force`) names no path; its value does.
 */
function candidates(text: string): string[] {
  const eq = /^(?:--[A-Za-z0-9-]+|[A-Za-z_][A-Za-z0-9_]*)=(.+)$/.exec(text);
  if (text.startsWith('-')) return eq ? [eq[1]!] : [];
  return eq ? [text, eq[1]!] : [text];
}

function resolved(word: string, absolute: string, glob: boolean, view: SandboxView): TouchedPath[] {
  if (glob) {
    const matches = expandGlob(absolute, view);
    if (matches === null || matches.length === 0) return [unresolved(word, absolute)];
    return matches.map((m) => physical(word, normal(m), view));
  }
  return [physical(word, normal(absolute), view)];
}

/** An absolute path with `.`, `..`, repeated and trailing slashes removed, as the kernel reads it. */
function normal(absolute: string): string {
  const path = posix.normalize(absolute);
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

function unresolved(word: string, path: string): TouchedPath {
  return { word, path, glob: true, physical: () => undefined };
}

function physical(word: string, path: string, view: SandboxView): TouchedPath {
  let real: string | null | undefined;
  return {
    word,
    path,
    physical: () => {
      if (real === undefined) {
        // A path that does not exist (in the command's view) opens nothing.
        const found = view.resolve(path);
        real = found.exists ? found.path : null;
      }
      return real !== null && real !== path ? real : undefined;
    },
  };
}

/**
 * Pathname expansion of an absolute glob, segment by segment with
 * picomatch: `*`, `?` and `[…]` never match `/`, and match a leading `.`
 * only when the segment's pattern starts with one. `null` when there are
 * more than `MAX_GLOB_MATCHES` matches.
 */
function expandGlob(pattern: string, view: SandboxView): string[] | null {
  let found = ['/'];
  for (const segment of pattern.split('/').filter((s) => s !== '')) {
    const next: string[] = [];
    if (!/[*?[]/.test(segment)) {
      for (const dir of found) next.push(posix.join(dir, segment));
    } else {
      const match = picomatch(segment, { dot: segment.startsWith('.'), nobrace: true, noextglob: true });
      for (const dir of found) {
        const names = view.readdir(dir);
        if (names === null) continue;
        for (const name of names) if (match(name)) next.push(posix.join(dir, name));
      }
    }
    if (next.length > MAX_GLOB_MATCHES) return null;
    found = next;
  }
  // A literal segment after a glob keeps only the paths that exist (a dangling symlink counts).
  return found.filter((p) => existsInView(p, view));
}

/** `path` itself exists in the view (a dangling symlink counts, as for lstat). */
function existsInView(path: string, view: SandboxView): boolean {
  const names = view.readdir(posix.dirname(path));
  return names?.includes(posix.basename(path)) === true;
}
