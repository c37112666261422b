import type { CommandRequest } from '../decision.js';
import { ENV_DENY_FLOOR, globToRegExp, matchesAny } from '../policy-file/name-glob.js';
import { isInside } from '../policy-file/policy-paths.js';
import type { LoadedPolicy } from '../policy-file/policy-types.js';
import type { Assignment } from '../shell/analysis.js';
import { EnvNameMatcher, indirectionReason } from './env-names.js';

/** A portable variable name: what a client may name in `env`. */
const POSIX_ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The env and cwd part of a policy, compiled. */
export class RequestChecks {
  private readonly denied: EnvNameMatcher;
  private readonly clientSettable: readonly RegExp[];
  private readonly inline: readonly RegExp[] | undefined;
  private readonly inherited: readonly RegExp[];

  constructor(private readonly policy: LoadedPolicy) {
    this.denied = new EnvNameMatcher([...ENV_DENY_FLOOR, ...policy.env.deny]);
    this.clientSettable = policy.env.allowClientSet.map(globToRegExp);
    this.inline = policy.env.allowInline?.map(globToRegExp);
    this.inherited = policy.env.inherit.map(globToRegExp);
  }

  /** A name a command's environment may hold: one it inherits from the server, or one a client may set. */
  private inEnvironment(name: string): boolean {
    return matchesAny(name, this.inherited) || matchesAny(name, this.clientSettable);
  }

  /** Why the resolved cwd is refused, or null. `resolvedCwd` is null when the cwd does not resolve. */
  cwdProblem(request: CommandRequest, resolvedCwd: string | null): string | null {
    if (resolvedCwd === null) return `the cwd ${request.cwd} does not exist or cannot be resolved`;
    const roots = this.policy.cwdRoots;
    if (roots && !roots.some((root) => isInside(resolvedCwd, root))) {
      return `the cwd ${resolvedCwd} is outside the allowed roots (${roots.join(', ')})`;
    }
    return null;
  }

  /** One reason per client-set variable the policy refuses. Deny wins over allowClientSet. */
  envProblems(request: CommandRequest): string[] {
    const problems: string[] = [];
    for (const name of Object.keys(request.env)) {
      // Checked before any glob: `LC_*` must not let `LC_A\nLD_PRELOAD` through.
      if (!POSIX_ENV_NAME.test(name)) {
        problems.push(
          `${JSON.stringify(name)} is not a valid variable name (a letter or _, then letters, digits or _)`,
        );
      } else if (this.denied.matches(name))
        problems.push(`the client may not set ${name} (env.deny${why(name)})`);
      else if (!matchesAny(name, this.clientSettable))
        problems.push(`the client may not set ${name} (not in env.allowClientSet)`);
    }
    return problems;
  }

  /**
   * One reason per in-line assignment (`LD_PRELOAD=… ls`, `export`, `env
   * NAME=…`) of a denied name, or, when the policy lists `env.allowInline`,
   * of a name it does not list (an allowlist: a variable that points a
   * program at configuration is a way to run code, and no deny list names
   * them all).
   */
  assignmentProblems(assignments: readonly Assignment[]): string[] {
    const problems: string[] = [];
    const seen = new Set<string>();
    for (const a of assignments) {
      const { name } = a;
      if (seen.has(name)) continue;
      if (this.denied.matches(name))
        problems.push(`the line sets ${name}, which env.deny forbids${why(name)}`);
      else if (this.inline && !matchesAny(name, this.inline) && (a.exported || this.inEnvironment(name)))
        problems.push(`the line sets ${name}, which is not in env.allowInline${why(name)}`);
      else continue;
      seen.add(name);
    }
    return problems;
  }
}

function why(name: string): string {
  const reason = indirectionReason(name);
  return reason ? `: ${reason}` : '';
}
