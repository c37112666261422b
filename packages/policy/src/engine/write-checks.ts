import { lstatSync, readlinkSync } from 'node:fs';
import { isAbsolute, posix } from 'node:path';
import type { Redirection, Verdict } from '../decision.js';
import { homeDirectory, realpathOrNull } from '../policy-file/policy-paths.js';
import type { WritePattern, WritesPolicy } from '../policy-file/policy-types.js';

/** How one output redirection was decided. */
export interface WriteVerdict {
  readonly redirect: Redirection;
  /** The path judged (symlinks of existing parts resolved). */
  readonly path: string;
  readonly decision: Verdict;
  /** The deciding pattern; absent when `writes.default` decided. */
  readonly pattern?: WritePattern;
}

/** Symlinks followed per target before giving up (Linux stops at 40 too). */
const MAX_LINKS = 40;

/** The `writes` part of a policy, applied to the literal targets of a line's redirections. */
export class WriteChecks {
  constructor(private readonly writes: WritesPolicy) {}

  /** Judges a literal target written from `cwd` (absolute, resolved). */
  judge(redirect: Redirection, cwd: string): WriteVerdict {
    const { lexical, physical } = resolveWriteTarget(redirect, cwd);
    const denied = this.writes.deny.find((p) => matches(p, lexical) || matches(p, physical));
    if (denied) return { redirect, path: physical, decision: 'deny', pattern: denied };
    const allowed = this.writes.allow.find((p) => matches(p, physical));
    if (allowed) return { redirect, path: physical, decision: 'allow', pattern: allowed };
    return { redirect, path: physical, decision: this.writes.default };
  }
}

function matches(pattern: WritePattern, path: string): boolean {
  return pattern.matchers.some((m) => m.test(path));
}

/**
 * Where a redirection target lands, as two absolute paths:
 * - `lexical`: `~` expanded, joined to the cwd, `.`/`..` removed as text;
 * - `physical`: what the kernel would open now: every existing symlink
 *   followed (the final one too, dangling or not: `>` writes through it),
 *   `..` taken after the symlink before it; the part below the deepest
 *   existing directory is appended as text.
 * Paths under /dev and /proc are taken lexically: /dev/stdout and
 * /proc/self/… lead to the server's own fds, not the command's.
 * Resolution happens when the line is judged: a symlink the same line
 * creates before writing (`ln -s … x; ls > x`) is not seen.
 */
export function resolveWriteTarget(
  redirect: Pick<Redirection, 'target' | 'tilde'>,
  cwd: string,
): { lexical: string; physical: string } {
  const target = redirect.tilde ? homeDirectory() + redirect.target.slice(1) : redirect.target;
  const raw = isAbsolute(target) ? target : `${cwd}/${target}`;
  return { lexical: posix.resolve(raw), physical: physicalPath(raw) };
}

function physicalPath(raw: string): string {
  let path = raw;
  for (let hops = 0; hops <= MAX_LINKS; hops++) {
    if (isDeviceOrProc(path)) return posix.resolve(path);
    const whole = realpathOrNull(path);
    if (whole !== null) return whole;
    const slash = path.lastIndexOf('/');
    const parent = path.slice(0, slash) || '/';
    let link: string | null = null;
    try {
      if (lstatSync(path).isSymbolicLink()) link = readlinkSync(path);
    } catch {
      link = null;
    }
    if (link === null) return posix.join(deepestExisting(parent), path.slice(slash + 1));
    path = isAbsolute(link) ? link : `${parent}/${link}`;
  }
  return posix.resolve(raw);
}

/** `dir` with its deepest existing ancestor realpath'd and the rest appended as written. */
function deepestExisting(dir: string): string {
  const rest: string[] = [];
  let at = dir;
  for (;;) {
    const real = isDeviceOrProc(at) ? null : realpathOrNull(at);
    if (real !== null) return posix.join(real, ...rest);
    const slash = at.lastIndexOf('/');
    if (slash <= 0) return posix.resolve(dir);
    rest.unshift(at.slice(slash + 1));
    at = at.slice(0, slash);
  }
}

function isDeviceOrProc(path: string): boolean {
  const normal = posix.resolve(path);
  return /^\/(dev|proc)(\/|$)/.test(normal);
}
