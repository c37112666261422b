import type { LoadedPolicy } from '../policy-file/policy-types.js';
import { type Loosening, mergeLimits, mergeSandbox } from './merge-sandbox.js';

/** Which layer of a layered policy decided. */
export type PolicyLayerName = 'managed' | 'workspace';

/** The prefix of a managed rule's id in a layered decision's `ruleIds` (`managed:no-push`): a workspace rule of the same id names itself. */
export const MANAGED_RULE_PREFIX = 'managed:';

/**
 * A workspace policy under an administrator's managed policy. Commands are
 * judged by each layer's own engine and the stricter decision wins
 * (`LayeredPolicyEngine`); what is enforced outside the judge is merged here.
 */
export interface PolicyLayers {
  readonly managed: LoadedPolicy;
  readonly workspace: LoadedPolicy;
  /**
   * What the server enforces besides the judge: the merged `sandbox` and
   * `limits`, and an `inheritedEnv` that passes a server variable only when
   * both layers pass it. Its `path`, `sha256`, `text`, rules and tests are
   * the workspace's: judging goes through the layers, never through this.
   */
  readonly effective: LoadedPolicy;
  /** What the workspace asked for beyond the managed layer's sandbox and limits (ignored by the merge). */
  readonly loosened: readonly Loosening[];
}

/** Merges a managed and a workspace policy (`mergeSandbox`, `mergeLimits`). */
export function layerPolicies(managed: LoadedPolicy, workspace: LoadedPolicy): PolicyLayers {
  const sandbox = mergeSandbox(managed.sandbox, workspace.sandbox);
  const limits = mergeLimits(managed.limits, workspace.limits);
  const effective: LoadedPolicy = Object.freeze({
    ...workspace,
    sandbox: sandbox.value,
    limits: limits.value,
    inheritedEnv(serverEnv: NodeJS.ProcessEnv): Record<string, string> {
      const allowed = managed.inheritedEnv(serverEnv);
      const out: Record<string, string> = {};
      for (const [name, value] of Object.entries(workspace.inheritedEnv(serverEnv))) {
        if (Object.hasOwn(allowed, name)) out[name] = value;
      }
      return out;
    },
  });
  return Object.freeze({
    managed,
    workspace,
    effective,
    loosened: Object.freeze([...sandbox.loosened, ...limits.loosened]),
  });
}

/** `policy` judging with another sandbox section (each layer's engine sees the filesystem the merged sandbox shows). */
export function withSandbox(policy: LoadedPolicy, sandbox: LoadedPolicy['sandbox']): LoadedPolicy {
  return Object.freeze({ ...policy, sandbox });
}
