import type { CommandRequest, PolicyDecision, Verdict } from '../decision.js';
import { createPolicyEngine, type Explanation, type PolicyEngine } from '../engine/policy-engine.js';
import { type PolicyTestReport, runPolicyTests } from '../engine/policy-tests.js';
import { PolicyError } from '../policy-file/policy-error.js';
import type { LoadedPolicy } from '../policy-file/policy-types.js';
import type { CommandJudge } from '../ports/command-judge.js';
import type { Loosening } from './merge-sandbox.js';
import {
  layerPolicies,
  MANAGED_RULE_PREFIX,
  type PolicyLayerName,
  type PolicyLayers,
  withSandbox,
} from './policy-layers.js';

/** A layered decision: the stricter layer's, with its name; a managed rule's id carries `managed:`. */
export interface LayeredDecision extends PolicyDecision {
  readonly layer: PolicyLayerName;
}

/** A layered decision with each layer's own explanation (`policy explain`). */
export interface LayeredExplanation {
  readonly decision: LayeredDecision;
  readonly managed: Explanation;
  readonly workspace: Explanation;
}

const RANK: Readonly<Record<Verdict, number>> = { allow: 0, ask: 1, deny: 2 };

/**
 * Judges a request by the managed layer's engine and the workspace's, each
 * on its own rules, `default`, cwd roots, env and writes sections, and
 * answers the stricter decision (deny > ask > allow). Rule lists are never
 * merged, so no workspace rule can shadow, reorder or replace a managed
 * rule, by id or otherwise.
 *
 * The managed layer "leaves a line open" when its engine allows it without
 * a rule (no managed rule matched any command and its `default` is
 * `allow`): then the workspace's decision is the answer and names the
 * workspace. Otherwise, on a tie, the managed layer is named (its deny or
 * ask stands whatever the workspace says; an allow both rule sets give is
 * the managed rule's). Synchronous and total, as `PolicyEngine.judge`.
 */
export class LayeredPolicyEngine implements CommandJudge {
  constructor(
    readonly layers: PolicyLayers,
    private readonly managed: PolicyEngine,
    private readonly workspace: PolicyEngine,
  ) {}

  judge(request: CommandRequest): LayeredDecision {
    return this.explain(request).decision;
  }

  explain(request: CommandRequest): LayeredExplanation {
    const managed = this.managed.explain(request);
    const workspace = this.workspace.explain(request);
    const layer = decidingLayer(managed.decision, workspace.decision);
    const chosen = layer === 'managed' ? managed.decision : workspace.decision;
    const decision: LayeredDecision =
      layer === 'managed'
        ? {
            ...chosen,
            ruleIds: chosen.ruleIds.map((id) => MANAGED_RULE_PREFIX + id),
            reason: `${chosen.reason} (managed policy ${this.layers.managed.path})`,
            layer,
          }
        : { ...chosen, layer };
    return { decision, managed, workspace };
  }

  /**
   * The managed layer's embedded tests, run against the layered result: an
   * administrator's examples hold whatever workspace policy is added. A test's
   * `rule` names a managed rule: it passes only when that managed rule decided.
   */
  managedTests(): PolicyTestReport {
    const asManaged = {
      judge: (request: CommandRequest): PolicyDecision => {
        const d = this.judge(request);
        return {
          ...d,
          ruleIds: d.ruleIds.map((id) =>
            id.startsWith(MANAGED_RULE_PREFIX) ? id.slice(MANAGED_RULE_PREFIX.length) : `workspace:${id}`,
          ),
        };
      },
    };
    return runPolicyTests(asManaged, this.layers.managed);
  }

  /**
   * Where the workspace policy asks for more than the managed one gives:
   * the sandbox and limits the merge narrowed, every workspace rule that
   * shares a managed rule's id, every example (`match`) of a workspace
   * allow or ask rule that a stricter managed rule matches, and every
   * workspace test expecting more than the layers give. Each names the rule.
   */
  loosenings(): Loosening[] {
    const { managed, workspace } = this.layers;
    const out: Loosening[] = [...this.layers.loosened];
    const managedIds = new Set(managed.rules.map((r) => r.id));
    workspace.rules.forEach((rule, i) => {
      const key = `rules[${i}] (${rule.id})`;
      if (managedIds.has(rule.id)) {
        out.push({
          key,
          message: `the managed policy has a rule "${rule.id}" too; both are judged, and decisions name the managed one ${MANAGED_RULE_PREFIX}${rule.id}`,
        });
      }
      if (rule.decision === 'deny') return;
      for (const line of rule.match ?? []) {
        const stricter = this.managed
          .rulesMatchingExample(line)
          .filter((m) => RANK[m.decision] > RANK[rule.decision]);
        if (stricter.length > 0) {
          const by = stricter.map((m) => `${m.decision} rule ${MANAGED_RULE_PREFIX}${m.id}`).join(', ');
          out.push({
            key,
            message: `rule "${rule.id}" would ${rule.decision} ${JSON.stringify(line)}, which the managed ${by} overrides`,
          });
        }
      }
    });
    for (const test of workspace.tests) {
      const got = this.judge({ command: test.command, args: test.args, cwd: test.cwd, env: test.env });
      if (RANK[got.decision] > RANK[test.expect] && got.layer === 'managed') {
        out.push({
          key: `tests (line ${test.position.line})`,
          message: `${JSON.stringify(test.command)} expects ${test.expect}${test.rule ? ` by rule "${test.rule}"` : ''}; the managed policy decides ${got.decision}${got.ruleIds.length ? ` (${got.ruleIds.join(', ')})` : ' (its default)'}`,
        });
      }
    }
    return out;
  }
}

function decidingLayer(managed: PolicyDecision, workspace: PolicyDecision): PolicyLayerName {
  const m = RANK[managed.decision];
  const w = RANK[workspace.decision];
  if (m !== w) return m > w ? 'managed' : 'workspace';
  // A tie: an allow the managed layer gave by its default alone left the line open.
  return managed.decision === 'allow' && managed.ruleIds.length === 0 ? 'workspace' : 'managed';
}

export interface LayeredEngineOptions {
  /** Refuse when the workspace's embedded tests fail on its own layer, or the managed layer's on the layered result. */
  readonly requirePassingTests?: boolean;
  /** Check each layer's rule examples (default true), as `createPolicyEngine`. */
  readonly checkExamples?: boolean;
}

/**
 * Builds the layered engine: each layer's engine with the merged sandbox
 * (so both judge paths against the filesystem commands will see), each
 * layer's rule examples checked on its own engine, and, when asked, the
 * workspace's tests on its engine and the managed tests on the layered result.
 */
export async function createLayeredEngine(
  managed: LoadedPolicy,
  workspace: LoadedPolicy,
  options: LayeredEngineOptions = {},
): Promise<LayeredPolicyEngine> {
  const layers = layerPolicies(managed, workspace);
  const sandbox = layers.effective.sandbox;
  const checkExamples = options.checkExamples ?? true;
  const managedEngine = await createPolicyEngine(withSandbox(managed, sandbox), { checkExamples });
  const workspaceEngine = await createPolicyEngine(withSandbox(workspace, sandbox), {
    checkExamples,
    requirePassingTests: options.requirePassingTests ?? false,
  });
  const engine = new LayeredPolicyEngine(layers, managedEngine, workspaceEngine);
  if (options.requirePassingTests) {
    const failures = engine.managedTests().results.filter((r) => !r.passed);
    if (failures.length > 0) {
      throw new PolicyError(
        'POLICY_TESTS_FAILED',
        `${failures.length} embedded test(s) of the managed policy ${managed.path} failed with the workspace policy ${workspace.path} added`,
        failures.map((f) => ({
          file: managed.path,
          ...f.test.position,
          key: 'tests',
          message: `${JSON.stringify(f.test.command)}: ${f.failure}`,
        })),
      );
    }
  }
  return engine;
}
