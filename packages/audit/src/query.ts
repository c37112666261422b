import { readAuditLines } from './line-reader.js';
import {
  type ClientFields,
  groupOf,
  type PrincipalFields,
  type RecordedVerdict,
  readRecordGroups,
} from './record-schema.js';

/**
 * A gate decision as recorded in `termgate.decision`: `ask` on the create
 * that asked a person (and on an answer still open), allow or deny otherwise.
 */
export type AuditDecision = RecordedVerdict;

/** A record read back for display. Reading does not check the chain: `verifyAuditFile` does. */
export type AuditEntry =
  | { readonly line: number; readonly record: Readonly<Record<string, unknown>> }
  | { readonly line: number; readonly problem: string };

/** Reads an audit file's records in file order; unreadable lines come back as problems. Throws I/O errors. */
export function* readAuditRecords(path: string): Generator<AuditEntry> {
  for (const { lineNo, bytes, terminated } of readAuditLines(path)) {
    if (bytes.length === 0) continue;
    try {
      const parsed: unknown = JSON.parse(bytes.toString('utf8'));
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        yield { line: lineNo, problem: 'not a JSON object' };
      } else {
        yield { line: lineNo, record: parsed as Record<string, unknown> };
      }
    } catch {
      yield { line: lineNo, problem: terminated ? 'not valid JSON' : 'truncated last line' };
    }
  }
}

/**
 * A nested field by its dotted name as docs/AUDIT.md writes it
 * (`"termgate.terminal_id"`), or undefined. termgate's own readers use the
 * typed groups of `readRecordGroups` (`record-schema.ts`) instead.
 */
export function auditField(record: Readonly<Record<string, unknown>>, path: string): unknown {
  let value: unknown = record;
  for (const key of path.split('.')) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** Filters of `termgate audit show`; all given filters must match (AND, like ausearch). */
export interface AuditQuery {
  /** Records at or after this instant. */
  readonly since?: Date;
  /** `termgate.decision` equals this; records without a decision never match. */
  readonly decision?: AuditDecision;
  /** `termgate.terminal_id` starts with this (the table shows short ids). */
  readonly terminal?: string;
  /** Tested against `process.command_line`; records without one never match. */
  readonly grep?: RegExp;
  /** `termgate.client.name` equals this; records without a client never match. */
  readonly client?: string;
  /** `user.id` (the principal's subject) equals this; records without a principal never match. */
  readonly principal?: string;
  /** `termgate.principal.issuer` equals this; records without a principal never match. */
  readonly principalIssuer?: string;
}

export function matchesAuditQuery(record: Readonly<Record<string, unknown>>, query: AuditQuery): boolean {
  if (query.since !== undefined) {
    const at = Date.parse(String(record['@timestamp']));
    if (Number.isNaN(at) || at < query.since.getTime()) return false;
  }
  const fields = readRecordGroups(record);
  const { termgate } = fields;
  if (query.decision !== undefined && termgate.decision !== query.decision) return false;
  if (query.terminal !== undefined) {
    const id = termgate.terminal_id;
    if (typeof id !== 'string' || !id.startsWith(query.terminal)) return false;
  }
  if (query.client !== undefined && groupOf<ClientFields>(termgate.client).name !== query.client)
    return false;
  if (query.principal !== undefined && fields.user.id !== query.principal) return false;
  if (
    query.principalIssuer !== undefined &&
    groupOf<PrincipalFields>(termgate.principal).issuer !== query.principalIssuer
  )
    return false;
  if (query.grep !== undefined) {
    const line = fields.process.command_line;
    if (typeof line !== 'string' || !query.grep.test(line)) return false;
  }
  return true;
}
