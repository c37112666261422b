/** Public API of @termgate/policy: the policy engine, the gate and the audit trail. Named exports only. */

export { InMemoryAuditSink, type InMemoryAuditSinkOptions } from './adapters/in-memory-audit-sink.js';
export { PinoAuditSink, type PinoAuditSinkOptions } from './adapters/pino-audit-sink.js';
export { AuditError, type AuditErrorCode } from './audit/audit-error.js';
export { type ChainHead, sha256Hex } from './audit/chain.js';
export {
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
export { type VerifyResult, verifyAuditFile, verifyAuditLines } from './audit/verify.js';
export type { CommandRequest, PolicyDecision, SimpleCommand, Verdict } from './decision.js';
export { allowFollowUps, type FollowUpPolicy, PolicyGate, type PolicyGateOptions } from './policy-gate.js';
export { AUDIT_SINK, type AuditEvent, type AuditSink } from './ports/audit-sink.js';
export { COMMAND_JUDGE, type CommandJudge } from './ports/command-judge.js';
