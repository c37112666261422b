/**
 * Local error codes of the audit trail. The gate turns any of them into a
 * refusal; the CLI turns them into a message and a non-zero exit.
 *
 * - `AUDIT_UNWRITABLE`: the audit file could not be opened (permission,
 *   missing directory, a directory in its place, …).
 * - `AUDIT_TAIL_CORRUPT`: the existing file's last record cannot be continued
 *   (truncated mid-record, not JSON, hash mismatch), at open or, for records
 *   another writer appended, before an append. Nothing is written.
 * - `AUDIT_WRITE_FAILED`: a write or fsync failed. The sink stays failed.
 * - `AUDIT_FILE_REPLACED`: the path no longer names the file that was opened
 *   (removed, renamed, replaced), or it is shorter than when last written.
 * - `AUDIT_LOCK_TIMEOUT`: another writer held the file's lock too long.
 *   Nothing was written and the sink is not failed: the next append retries.
 * - `AUDIT_CLOSED`: `append` after `close`.
 * - `AUDIT_INVALID_EVENT`: the event sets a field the sink owns, or is not
 *   JSON (a cycle, a BigInt). Nothing was written and the sink is not failed.
 */
export type AuditErrorCode =
  | 'AUDIT_UNWRITABLE'
  | 'AUDIT_TAIL_CORRUPT'
  | 'AUDIT_WRITE_FAILED'
  | 'AUDIT_FILE_REPLACED'
  | 'AUDIT_LOCK_TIMEOUT'
  | 'AUDIT_CLOSED'
  | 'AUDIT_INVALID_EVENT';

export class AuditError extends Error {
  override readonly name = 'AuditError';
  constructor(
    readonly code: AuditErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** Brand check that survives duplicated module copies. */
  static is(value: unknown): value is AuditError {
    return (
      value instanceof Error && value.name === 'AuditError' && typeof (value as AuditError).code === 'string'
    );
  }
}

/** `ENOSPC: no space left on device, write` for Node system errors, else the message. */
export function describeCause(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
