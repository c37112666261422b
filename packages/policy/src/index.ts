/**
 * Public API of @termgate/policy: the policy engine, the gate, and the bodies
 * of the audit records the gate writes (the trail itself is @termgate/audit).
 * Named exports only. The adapters that run the judge and the sandbox
 * profiler in worker threads are `@termgate/policy/adapters`.
 */

export {
  type NetworkConnection,
  type NetworkRefusal,
  networkAllowedEvent,
  networkRefusedEvent,
  type PolicyInfo,
  type RecordedDecision,
  recordServerStart,
  recordServerStop,
  type ServerStartInfo,
  type ServerStopInfo,
} from './audit-events/events.js';
export type { CommandRequest, PolicyDecision, Redirection, SimpleCommand, Verdict } from './decision.js';
export {
  type CommandVerdict,
  createPolicyEngine,
  type Explanation,
  PolicyEngine,
  type PolicyEngineOptions,
} from './engine/policy-engine.js';
export { lintPolicy, type PolicyLintOptions, type PolicyWarning } from './engine/policy-lint.js';
export { type PolicyTestReport, type PolicyTestResult, runPolicyTests } from './engine/policy-tests.js';
export { resolveWriteTarget, type WriteVerdict } from './engine/write-checks.js';
export {
  createLayeredEngine,
  type LayeredDecision,
  type LayeredEngineOptions,
  type LayeredExplanation,
  LayeredPolicyEngine,
} from './layers/layered-engine.js';
export { DEFAULT_MANAGED_POLICY_PATH, managedPolicyPath } from './layers/managed-path.js';
export {
  type Loosening,
  type Merged,
  mergeLimits,
  mergeNetwork,
  mergeSandbox,
} from './layers/merge-sandbox.js';
export {
  layerPolicies,
  MANAGED_RULE_PREFIX,
  type PolicyLayerName,
  type PolicyLayers,
} from './layers/policy-layers.js';
export { loadPolicyFile, parsePolicyText } from './policy-file/load-policy.js';
export {
  formatIssue,
  PolicyError,
  type PolicyErrorCode,
  type PolicyIssue,
} from './policy-file/policy-error.js';
export type {
  EnvPolicy,
  LoadedPolicy,
  PolicyLimits,
  PolicyRule,
  PolicyTest,
  SandboxPolicy,
  SourcePosition,
  WritePattern,
  WritesPolicy,
} from './policy-file/policy-types.js';
export { POLICY_SCHEMA_PATH } from './policy-file/schema-validator.js';
export { PolicyGate, type PolicyGateOptions } from './policy-gate.js';
export { COMMAND_JUDGE, type CommandJudge } from './ports/command-judge.js';
export type { SandboxProfileSource } from './ports/sandbox-profile-source.js';
export { sandboxProfileSha256 } from './sandbox/profile-digest.js';
export {
  type ProtectedPaths,
  SandboxProfiler,
  type SandboxProfilerOptions,
} from './sandbox/sandbox-profiler.js';
export type { Assignment, LineAnalysis, Problem } from './shell/analysis.js';
export { assertBashCompatibleShell } from './shell/assert-bash.js';
export { DEFAULT_POLICY_PATH, INSTALL_ROOT } from './shell/module-location.js';
