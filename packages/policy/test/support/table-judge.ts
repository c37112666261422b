import type { CommandJudge, CommandRequest, PolicyDecision } from '@termgate/policy';

/** One row: the first row whose `match` fits the request's command decides. */
export interface JudgeRow {
  readonly match: string | RegExp;
  readonly decision: PolicyDecision;
}

/**
 * A table-driven `CommandJudge` for tests (the real engine is separate).
 * Records every request it saw, in order; `throwing` makes it throw.
 */
export class TableJudge implements CommandJudge {
  readonly requests: CommandRequest[] = [];
  throwing: Error | null = null;

  constructor(
    private readonly rows: readonly JudgeRow[],
    private readonly fallback: PolicyDecision = deny('no rule matched', []),
    private readonly onJudge?: () => void,
  ) {}

  judge(request: CommandRequest): PolicyDecision {
    this.onJudge?.();
    this.requests.push(request);
    if (this.throwing !== null) throw this.throwing;
    const row = this.rows.find(({ match }) =>
      typeof match === 'string' ? request.command === match : match.test(request.command),
    );
    return row?.decision ?? this.fallback;
  }
}

export function allow(
  reason: string,
  ruleIds: readonly string[],
  extra: Partial<PolicyDecision> = {},
): PolicyDecision {
  return { decision: 'allow', ruleIds, reason, subcommands: [], resolvedCwd: null, ...extra };
}

export function deny(
  reason: string,
  ruleIds: readonly string[],
  extra: Partial<PolicyDecision> = {},
): PolicyDecision {
  return { decision: 'deny', ruleIds, reason, subcommands: [], resolvedCwd: null, ...extra };
}
