import type { CommandRequest, PolicyDecision, SimpleCommand } from '../decision.js';
import { PolicyError } from '../policy-file/policy-error.js';
import { realpathOrNull } from '../policy-file/policy-paths.js';
import type { LoadedPolicy, PolicyRule } from '../policy-file/policy-types.js';
import type { CommandJudge } from '../ports/command-judge.js';
import type { LineAnalysis } from '../shell/analysis.js';
import { loadBashParser } from '../shell/bash-grammar.js';
import { ShellAnalyzer } from '../shell/shell-analyzer.js';
import { CompiledRule } from './compiled-rule.js';
import { runPolicyTests } from './policy-tests.js';
import { RequestChecks } from './request-checks.js';

/** How one simple command was decided. */
export interface CommandVerdict {
  readonly command: SimpleCommand;
  readonly decision: 'allow' | 'deny';
  /** The deciding rules (deny rules when any matched, else allow rules); empty when `default` decided. */
  readonly rules: readonly PolicyRule[];
}

/** A decision with the detail `policy explain` shows. */
export interface Explanation {
  readonly decision: PolicyDecision;
  readonly analysis: LineAnalysis;
  readonly verdicts: readonly CommandVerdict[];
  /** Line-level reasons to deny: cwd, env, constructs that cannot be judged. */
  readonly refusals: readonly string[];
}

/** Judges requests against one loaded policy. Implements the gate's `CommandJudge` port. */
export class PolicyEngine implements CommandJudge {
  private readonly rules: readonly CompiledRule[];
  private readonly checks: RequestChecks;

  constructor(
    readonly policy: LoadedPolicy,
    private readonly analyzer: ShellAnalyzer,
  ) {
    this.rules = policy.rules.map((r) => new CompiledRule(r));
    this.checks = new RequestChecks(policy);
  }

  /**
   * Synchronous and total: never throws. A line is allowed only when the cwd
   * and env pass, nothing in it is beyond static judgement (or the policy
   * allows dynamic constructs), and every simple command in it is allowed.
   * Per command, any matching deny rule wins over matching allow rules; with
   * no match, `default` decides.
   */
  judge(request: CommandRequest): PolicyDecision {
    return this.explain(request).decision;
  }

  /** `judge`, with the parsed line and the per-command verdicts. */
  explain(request: CommandRequest): Explanation {
    try {
      return this.decide(request);
    } catch (error) {
      const decision: PolicyDecision = {
        decision: 'deny',
        ruleIds: [],
        reason: `denied: internal error while judging (${(error as Error).message})`,
        subcommands: [],
        resolvedCwd: null,
      };
      return {
        decision,
        analysis: { commands: [], problems: [], assignments: [], redirects: [] },
        verdicts: [],
        refusals: [],
      };
    }
  }

  private decide(request: CommandRequest): Explanation {
    const resolvedCwd = realpathOrNull(request.cwd);
    const analysis =
      request.args === null
        ? this.analyzer.analyzeLine(request.command)
        : this.analyzer.analyzeArgv([request.command, ...request.args]);
    const refusals: string[] = [];
    const cwdProblem = this.checks.cwdProblem(request, resolvedCwd);
    if (cwdProblem) refusals.push(cwdProblem);
    refusals.push(...this.checks.envProblems(request));
    for (const p of analysis.problems) {
      if (p.kind === 'dynamic' && this.policy.allowDynamic) continue;
      refusals.push(`cannot judge ${p.message}${p.via.length ? ` (in ${p.via.join(' > ')})` : ''}`);
    }
    refusals.push(...this.checks.assignmentProblems(analysis.assignments));

    const verdicts = analysis.commands.map((command) => this.verdict(command, resolvedCwd));
    const denied = verdicts.filter((v) => v.decision === 'deny');
    const base = { subcommands: analysis.commands, resolvedCwd };
    let decision: PolicyDecision;
    if (refusals.length > 0 || denied.length > 0) {
      const parts = [...refusals, ...denied.map(describe)];
      decision = {
        ...base,
        decision: 'deny',
        ruleIds: ruleIds(denied),
        reason: `denied: ${parts.join('; ')}`,
      };
    } else if (verdicts.length === 0) {
      decision = {
        ...base,
        decision: this.policy.default,
        ruleIds: [],
        reason: `${this.policy.default === 'allow' ? 'allowed' : 'denied'}: no command to run; the default (${this.policy.default}) decided`,
      };
    } else {
      decision = {
        ...base,
        decision: 'allow',
        ruleIds: ruleIds(verdicts),
        reason: `allowed: ${verdicts.map(describe).join('; ')}`,
      };
    }
    return { decision, analysis, verdicts, refusals };
  }

  private verdict(command: SimpleCommand, cwd: string | null): CommandVerdict {
    const matched = this.rules.filter((r) => r.matches(command, cwd)).map((r) => r.rule);
    const denies = matched.filter((r) => r.decision === 'deny');
    if (denies.length > 0) return { command, decision: 'deny', rules: denies };
    const allows = matched.filter((r) => r.decision === 'allow');
    if (allows.length > 0) return { command, decision: 'allow', rules: allows };
    return { command, decision: this.policy.default, rules: [] };
  }
}

export interface PolicyEngineOptions {
  /**
   * Refuse a policy whose embedded tests fail (`PolicyError`
   * `POLICY_TESTS_FAILED`, one issue per failing test), as Codex does with
   * its examples. Default false: `policy test` reports them instead.
   */
  readonly requirePassingTests?: boolean;
}

/** Loads the bash parser (once per process) and returns an engine for `policy`. */
export async function createPolicyEngine(
  policy: LoadedPolicy,
  options: PolicyEngineOptions = {},
): Promise<PolicyEngine> {
  const engine = new PolicyEngine(policy, new ShellAnalyzer(await loadBashParser()));
  if (options.requirePassingTests) {
    const failures = runPolicyTests(engine, policy).results.filter((r) => !r.passed);
    if (failures.length > 0) {
      throw new PolicyError(
        'POLICY_TESTS_FAILED',
        `${failures.length} embedded test(s) of ${policy.path} failed`,
        failures.map((f) => ({
          file: policy.path,
          ...f.test.position,
          key: 'tests',
          message: `${JSON.stringify(f.test.command)}: ${f.failure}`,
        })),
      );
    }
  }
  return engine;
}

function ruleIds(verdicts: readonly CommandVerdict[]): string[] {
  return [...new Set(verdicts.flatMap((v) => v.rules.map((r) => r.id)))];
}

function describe(v: CommandVerdict): string {
  const shown = excerpt(v.command.argv.join(' '));
  if (v.rules.length === 0) return `\`${shown}\` matched no rule and the default is ${v.decision}`;
  const rules = v.rules.map((r) => (r.reason ? `${r.id} (${r.reason})` : r.id)).join(', ');
  return v.decision === 'deny' ? `\`${shown}\` matched deny rule ${rules}` : `\`${shown}\` by ${rules}`;
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > 80 ? `${flat.slice(0, 77)}...` : flat;
}
