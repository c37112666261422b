/**
 * Public API of @termgate/audit: the hash-chained ECS audit trail. Named exports only.
 *
 * This package is a leaf: it imports nothing of termgate's (no policy, core,
 * cli, termhost or transport), so `termgate audit …` loads the trail code
 * alone, never the policy engine or its parser. It knows records by their
 * ECS field names, not by who wrote them.
 *
 * The records' shapes are defined here, once (`record-schema.ts`). The
 * bodies of the records the policy gate writes (`terminal-<verb>`,
 * `terminal-spawn`, `terminal-exit`, `server-start`, `server-stop`,
 * `network-refused`) are built in @termgate/policy (`src/audit-events/`),
 * from the gate's own types (gate requests, verdicts, parsed subcommands),
 * in those shapes; this package reads the fields back through the same
 * names (`audit show`, `audit report`, the summary).
 *
 * Domain code (this directory) never imports the adapters: the sinks, the
 * append lock and the trail file are reachable only through
 * the `@termgate/audit/adapters` subpath. `.dependency-cruiser.cjs` enforces
 * all three rules.
 */

export { AskRoundTrips } from './ask-round-trips.js';
export { AuditError, type AuditErrorCode } from './audit-error.js';
export { type ChainHead, sha256Hex } from './chain.js';
export {
  CHECKPOINT_ALG,
  type CheckpointMember,
  checkCheckpoint,
  checkpointMessage,
  isFinalCheckpoint,
  keyId,
  signCheckpoint,
} from './checkpoint.js';
export { type AuditLine, readAuditLines } from './line-reader.js';
export { isWriterRunning } from './live-writer.js';
export { type OtlpAttributeValue, type OtlpLogFields, otlpLogFields } from './otlp-fields.js';
export { AUDIT_SINK, type AuditEvent, type AuditSink } from './ports/audit-sink.js';
export {
  type AuditDecision,
  type AuditEntry,
  type AuditQuery,
  auditField,
  matchesAuditQuery,
  readAuditRecords,
} from './query.js';
export { ECS_VERSION, type ServiceInfo } from './record-fields.js';
export {
  type AnswerRecord,
  type ApprovalFields,
  type AuditAction,
  type CallerFields,
  type CheckpointRecord,
  type ClientFields,
  type DecisionRecord,
  type DestinationFields,
  type EventFields,
  groupOf,
  type HostFields,
  type HttpFields,
  type NetworkRecord,
  type PolicyFields,
  type PrincipalFields,
  type ProcessFields,
  type ReadBack,
  type ReadBackGroups,
  type RecordedVerdict,
  type RecordGroups,
  type RuleFields,
  readRecordGroups,
  type SandboxFields,
  type ServerRecord,
  type SubcommandFields,
  type TamperingRecord,
  type TermgateFields,
  type TerminalProcessRecord,
  type TruncatedFields,
  type UserFields,
} from './record-schema.js';
export {
  type CommandRedaction,
  isNoRedaction,
  NO_REDACTION,
  parseCommandRedaction,
  type Redaction,
  redactRecord,
} from './redaction.js';
export { type ReportInput, type ReportVerification, renderReportHtml } from './report/report-html.js';
export {
  type ReportModel,
  ReportModelBuilder,
  type ReportServer,
  type ReportTerminal,
} from './report/report-model.js';
export { isRotationDue, parseRotatedName, type RotationPolicy, rotatedPath } from './rotation.js';
export { generateSigningKeyPair, loadPublicKeys, loadSigningKey } from './signing-key.js';
export { AuditSummarizer, type AuditSummary } from './summary.js';
export { listTrailDirectory } from './trail-files.js';
export { type TrailWriter, TrailWriters } from './trail-writers.js';
export { type VerifyResult, verifyAuditFile, verifyAuditLines } from './verify.js';
export {
  type TrailCheckpoints,
  type TrailFileSummary,
  type TrailProblem,
  type TrailVerifyOptions,
  type TrailVerifyResult,
  verifyAuditTrail,
} from './verify-trail.js';
