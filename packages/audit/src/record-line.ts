import { AuditError, describeCause } from './audit-error.js';
import { ECS_VERSION, type ServiceInfo, serviceFields } from './record-fields.js';

/**
 * The bytes of one audit record before it is sealed (docs/AUDIT.md,
 * "Records"): one JSON object on one line, whose members are, in order,
 * `log` (`{"level":"info"}`), `@timestamp` (ISO 8601, UTC, ms), `ecs`,
 * `service`, then `members` in their own order (the chain's `seq`,
 * `prev_hash` and `nonce`, `prev_file`, `checkpoint`, then the event body).
 * The sink seals the line with `AuditChain.seal` (`chain.ts`), which adds
 * `hash` as the last member.
 *
 * Every value is written as `JSON.stringify` writes it: members whose value
 * is `undefined`, a function or a symbol are left out, non-finite numbers
 * are `null`, `toJSON` is honoured. This is the format trails written
 * through pino 10 (up to this writer) have, byte for byte, so they verify
 * and continue unchanged; `packages/audit/test/record-line.test.ts` pins it
 * against such a trail.
 */
export class RecordLine {
  private readonly envelopeTail: string;

  constructor(service?: ServiceInfo) {
    this.envelopeTail = `,"ecs":${JSON.stringify({ version: ECS_VERSION })},"service":${JSON.stringify(serviceFields(service))},`;
  }

  /**
   * The unsealed line (no newline) of a record written at `at`. Throws
   * `AUDIT_INVALID_EVENT` when `members` cannot be written as JSON (a
   * cycle, a BigInt): nothing is then written.
   */
  format(at: Date, members: Readonly<Record<string, unknown>>): string {
    let json: string;
    try {
      json = JSON.stringify(members);
    } catch (error) {
      throw new AuditError('AUDIT_INVALID_EVENT', `an audit event must be JSON: ${describeCause(error)}`, {
        cause: error,
      });
    }
    return `{"log":{"level":"info"},"@timestamp":${JSON.stringify(at.toISOString())}${this.envelopeTail}${json.slice(1)}`;
  }
}
