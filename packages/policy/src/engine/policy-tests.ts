import type { CommandRequest, PolicyDecision } from '../decision.js';
import type { LoadedPolicy, PolicyTest } from '../policy-file/policy-types.js';

export interface PolicyTestResult {
  readonly test: PolicyTest;
  readonly passed: boolean;
  readonly decision: PolicyDecision;
  /** What was wrong, when it failed. */
  readonly failure?: string;
}

export interface PolicyTestReport {
  readonly results: readonly PolicyTestResult[];
  readonly passed: number;
  readonly failed: number;
}

/**
 * Runs a policy's embedded `tests` through a judge. A test passes when the
 * decision equals `expect` and, if the test names a `rule`, that rule is
 * among the decision's rule ids. The judge answers synchronously (the
 * in-process engine: a worker process runs the tests with its own engine).
 */
export function runPolicyTests(
  judge: { judge(request: CommandRequest): PolicyDecision },
  policy: LoadedPolicy,
): PolicyTestReport {
  const results = policy.tests.map((test): PolicyTestResult => {
    const decision = judge.judge({ command: test.command, args: test.args, cwd: test.cwd, env: test.env });
    let failure: string | undefined;
    if (decision.decision !== test.expect) failure = `expected ${test.expect}, got ${decision.decision}`;
    else if (test.rule !== undefined && !decision.ruleIds.includes(test.rule)) {
      failure = `expected rule ${test.rule} among [${decision.ruleIds.join(', ')}]`;
    }
    return failure === undefined
      ? { test, passed: true, decision }
      : { test, passed: false, decision, failure };
  });
  const failed = results.filter((r) => !r.passed).length;
  return { results, passed: results.length - failed, failed };
}
