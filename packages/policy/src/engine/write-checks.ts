import { isAbsolute, posix } from 'node:path';
import type { Redirection, Verdict } from '../decision.js';
import { homeDirectory } from '../policy-file/policy-paths.js';
import type { WritePattern, WritesPolicy } from '../policy-file/policy-types.js';
import { SandboxView } from './sandbox-view.js';

/** How one output redirection was decided. */
export interface WriteVerdict {
  readonly redirect: Redirection;
  /** The path judged (symlinks of existing parts resolved). */
  readonly path: string;
  readonly decision: Verdict;
  /** The deciding pattern; absent when `writes.default` decided. */
  readonly pattern?: WritePattern;
}

/** The `writes` part of a policy, applied to the literal targets of a line's redirections. */
export class WriteChecks {
  constructor(
    private readonly writes: WritesPolicy,
    private readonly view: SandboxView = SandboxView.HOST,
  ) {}

  /** Judges a literal target written from `cwd` (absolute, resolved). */
  judge(redirect: Redirection, cwd: string): WriteVerdict {
    const { lexical, physical } = resolveWriteTarget(redirect, cwd, this.view);
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
 * - `physical`: what the command would open now, in its own view of the
 *   filesystem (`view`: the sandbox's private `/tmp` and hidden paths are
 *   empty there, so a host symlink in them is not followed): every existing
 *   symlink followed (the final one too, dangling or not: `>` writes
 *   through it), `..` taken after the symlink before it; the part below the
 *   deepest existing directory is appended as text.
 * Paths under /dev and /proc are taken lexically: /dev/stdout and
 * /proc/self/… lead to the command's own fds.
 * Resolution happens when the line is judged: a symlink the same line
 * creates before writing (`ln -s … x; ls > x`) is not seen.
 */
export function resolveWriteTarget(
  redirect: Pick<Redirection, 'target' | 'tilde'>,
  cwd: string,
  view: SandboxView = SandboxView.HOST,
): { lexical: string; physical: string } {
  const target = redirect.tilde ? homeDirectory() + redirect.target.slice(1) : redirect.target;
  const raw = isAbsolute(target) ? target : `${cwd}/${target}`;
  return { lexical: posix.resolve(raw), physical: view.resolve(raw).path };
}
