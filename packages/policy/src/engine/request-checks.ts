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

  constructor(private readonly policy: LoadedPolicy) {
    this.denied = new EnvNameMatcher([...ENV_DENY_FLOOR, ...policy.env.deny]);
    this.clientSettable = policy.env.allowClientSet.map(globToRegExp);
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

  /** One reason per in-line assignment (`LD_PRELOAD=… ls`, `export`, `env NAME=…`) of a denied name. */
  assignmentProblems(assignments: readonly Assignment[]): string[] {
    return assignments
      .filter((a) => this.denied.matches(a.name))
      .map((a) => `the line sets ${a.name}, which env.deny forbids${why(a.name)}`);
  }
}

function why(name: string): string {
  const reason = indirectionReason(name);
  return reason ? `: ${reason}` : '';
}
