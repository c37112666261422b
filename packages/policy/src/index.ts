/** Public API of @termgate/policy: the policy engine, the gate and the audit trail. Named exports only. */
export type { CommandRequest, PolicyDecision, SimpleCommand, Verdict } from './decision.js';
export { AUDIT_SINK, type AuditEvent, type AuditSink } from './ports/audit-sink.js';
