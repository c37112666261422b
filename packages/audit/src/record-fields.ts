import { AuditError } from './audit-error.js';

/** The ECS version the records follow (`ecs.version`). */
export const ECS_VERSION = '8.11.0';

/** `service.*` of every record. */
export interface ServiceInfo {
  /** Defaults to `"termgate"`. */
  readonly name?: string;
  readonly version?: string;
}

/** Top-level members the sink writes itself; an event may not set them. */
export const SINK_OWNED_FIELDS: readonly string[] = [
  '@timestamp',
  'log',
  'ecs',
  'service',
  'message',
  'seq',
  'prev_hash',
  'nonce',
  'prev_file',
  'checkpoint',
  'hash',
];

export function assertEventFields(event: Readonly<Record<string, unknown>>): void {
  for (const key of SINK_OWNED_FIELDS) {
    if (Object.hasOwn(event, key)) {
      throw new AuditError('AUDIT_INVALID_EVENT', `an audit event may not set "${key}": the sink writes it`);
    }
  }
}

export function serviceFields(service: ServiceInfo = {}): { name: string; version?: string } {
  return service.version === undefined
    ? { name: service.name ?? 'termgate' }
    : { name: service.name ?? 'termgate', version: service.version };
}
