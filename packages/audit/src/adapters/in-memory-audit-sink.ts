import { AuditError } from '../audit-error.js';
import { AuditChain, type ChainHead } from '../chain.js';
import type { AuditEvent, AuditSink } from '../ports/audit-sink.js';
import { assertEventFields, ECS_VERSION, type ServiceInfo, serviceFields } from '../record-fields.js';

export interface InMemoryAuditSinkOptions {
  readonly service?: ServiceInfo;
  readonly now?: () => Date;
}

/**
 * The audit trail in memory, sealed with the same chain as the file sink, so
 * `verifyAuditLines(sink.lines)` works. For tests and embedders that ship
 * records themselves. `failWith(error)` makes every later `append` throw
 * `AUDIT_WRITE_FAILED`, like a full disk.
 */
export class InMemoryAuditSink implements AuditSink {
  private readonly written: string[] = [];
  private readonly chain = AuditChain.start();
  private readonly service: ReturnType<typeof serviceFields>;
  private readonly now: () => Date;
  private failure: Error | null = null;
  private closed = false;

  constructor(options: InMemoryAuditSinkOptions = {}) {
    this.service = serviceFields(options.service);
    this.now = options.now ?? (() => new Date());
  }

  /** The sealed lines, without newlines, in append order. */
  get lines(): readonly string[] {
    return this.written;
  }

  /** The records, parsed. */
  get records(): readonly Record<string, unknown>[] {
    return this.written.map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  get head(): ChainHead | null {
    return this.chain.last;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** From now on `append` throws (null: works again). */
  failWith(error: Error | null): void {
    this.failure = error;
  }

  append(event: AuditEvent): void {
    if (this.closed) throw new AuditError('AUDIT_CLOSED', 'in-memory audit sink is closed');
    if (this.failure !== null) {
      throw new AuditError('AUDIT_WRITE_FAILED', `in-memory audit sink: ${this.failure.message}`, {
        cause: this.failure,
      });
    }
    assertEventFields(event);
    const body = JSON.stringify({
      log: { level: 'info' },
      '@timestamp': this.now().toISOString(),
      ecs: { version: ECS_VERSION },
      service: this.service,
      ...this.chain.next(),
      ...event,
    });
    const { line, hash } = this.chain.seal(body);
    this.written.push(line);
    this.chain.commit(hash);
  }

  close(): void {
    this.closed = true;
  }
}
