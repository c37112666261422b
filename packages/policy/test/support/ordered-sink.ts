import type { AuditEvent, AuditSink } from '@termgate/audit';
import { InMemoryAuditSink } from '@termgate/audit/adapters';

/** An in-memory sink that also writes "append <event.action>" into a shared log, to check ordering. */
export class OrderedSink implements AuditSink {
  readonly inner = new InMemoryAuditSink();

  constructor(private readonly log: string[]) {}

  append(event: AuditEvent): void {
    const action = (event.event as { action?: string } | undefined)?.action;
    this.log.push(`append ${action}`);
    this.inner.append(event);
  }

  close(): void {
    this.inner.close();
  }
}
