/**
 * The audit trail's adapters (`@termgate/audit/adapters`): the sinks that
 * write the trail, for composition roots and tests. Named exports only.
 */

export type { AppendLockOptions } from './append-lock.js';
export {
  CheckpointingAuditSink,
  type CheckpointOptions,
  type CheckpointReason,
} from './checkpointing-audit-sink.js';
export { FileAuditSink, type FileAuditSinkOptions } from './file-audit-sink.js';
export { InMemoryAuditSink, type InMemoryAuditSinkOptions } from './in-memory-audit-sink.js';
