/** Public API of @termgate/policy: the policy engine, the gate and the audit trail. Named exports only. */

export {
  CheckpointingAuditSink,
  type CheckpointOptions,
  type CheckpointReason,
} from './adapters/checkpointing-audit-sink.js';
export {
  ChildProcessCommandJudge,
  type ChildProcessCommandJudgeOptions,
  DEFAULT_JUDGE_START_TIMEOUT_MS,
  DEFAULT_JUDGE_TIMEOUT_MS,
} from './adapters/child-process-command-judge.js';
export { InMemoryAuditSink, type InMemoryAuditSinkOptions } from './adapters/in-memory-audit-sink.js';
export { PinoAuditSink, type PinoAuditSinkOptions } from './adapters/pino-audit-sink.js';
export { AuditError, type AuditErrorCode } from './audit/audit-error.js';
export { type ChainHead, sha256Hex } from './audit/chain.js';
export {
  CHECKPOINT_ALG,
  type CheckpointMember,
  checkCheckpoint,
  checkpointMessage,
  keyId,
  signCheckpoint,
} from './audit/checkpoint.js';
export {
  type NetworkRefusal,
  networkRefusedEvent,
  type PolicyInfo,
  type RecordedDecision,
  recordServerStart,
  recordServerStop,
  type ServerStartInfo,
  type ServerStopInfo,
} from './audit/events.js';
export { type AuditLine, readAuditLines } from './audit/line-reader.js';
export {
  type AuditEntry,
  type AuditQuery,
  auditField,
  matchesAuditQuery,
  readAuditRecords,
} from './audit/query.js';
export { ECS_VERSION, type ServiceInfo } from './audit/record-fields.js';
export {
  type ReportInput,
  type ReportVerification,
  renderReportHtml,
} from './audit/report/report-html.js';
export { type ReportModel, ReportModelBuilder, type ReportTerminal } from './audit/report/report-model.js';
export { isRotationDue, parseRotatedName, type RotationPolicy, rotatedPath } from './audit/rotation.js';
export { generateSigningKeyPair, loadPublicKeys, loadSigningKey } from './audit/signing-key.js';
export { AuditSummarizer, type AuditSummary } from './audit/summary.js';
export { listTrailDirectory } from './audit/trail-files.js';
export { type VerifyResult, verifyAuditFile, verifyAuditLines } from './audit/verify.js';
export {
  type TrailCheckpoints,
  type TrailFileSummary,
  type TrailProblem,
  type TrailVerifyOptions,
  type TrailVerifyResult,
  verifyAuditTrail,
} from './audit/verify-trail.js';
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
export { allowFollowUps, type FollowUpPolicy, PolicyGate, type PolicyGateOptions } from './policy-gate.js';
export { AUDIT_SINK, type AuditEvent, type AuditSink } from './ports/audit-sink.js';
export { COMMAND_JUDGE, type CommandJudge } from './ports/command-judge.js';
export { sandboxProfileSha256 } from './sandbox/profile-digest.js';
export {
  type ProtectedPaths,
  SandboxProfiler,
  type SandboxProfilerOptions,
} from './sandbox/sandbox-profiler.js';
export type { Assignment, LineAnalysis, Problem } from './shell/analysis.js';
export { assertBashCompatibleShell } from './shell/assert-bash.js';
export { DEFAULT_POLICY_PATH, REPO_ROOT as INSTALL_ROOT } from './shell/module-location.js';
