/**
 * Where audit records go.
 *
 * Contract:
 * - `append` returns only after the record is written to its destination
 *   (and fsynced, when the sink is configured so). If it cannot write, it
 *   throws `AuditError` (`audit-error.ts`); the caller must then refuse
 *   whatever the record was about. A sink that failed may keep failing.
 * - Records are appended in call order. The sink owns `seq`, the timestamp
 *   and the hash chain (`chain.ts`); callers pass the event body only
 *   and may not set the fields the sink writes (`record-fields.ts`).
 * - `close` is idempotent; `append` after `close` throws.
 */
export interface AuditSink {
  append(event: AuditEvent): void;
  close(): void;
}

/** An ECS-shaped event body, before the sink adds `@timestamp`, `seq` and the chain. */
export type AuditEvent = Readonly<Record<string, unknown>>;

export const AUDIT_SINK: unique symbol = Symbol.for('termgate.AuditSink');
