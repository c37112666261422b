import { type AuditError, verifyAuditLines } from '@termgate/audit';
import { InMemoryAuditSink } from '@termgate/audit/adapters';

describe('InMemoryAuditSink', () => {
  test('seals records with the same chain as the file sink', () => {
    const sink = new InMemoryAuditSink();
    sink.append({ event: { action: 'a' } });
    sink.append({ event: { action: 'b' } });
    expect(sink.records.map((r) => r.seq)).toEqual([1, 2]);
    expect(verifyAuditLines(sink.lines)).toEqual({ ok: true, records: 2, head: sink.head });
  });

  test('failWith makes appends throw AUDIT_WRITE_FAILED until cleared', () => {
    const sink = new InMemoryAuditSink();
    sink.failWith(new Error('disk full'));
    expect(() => sink.append({ event: { action: 'a' } })).toThrow(
      expect.objectContaining({ code: 'AUDIT_WRITE_FAILED' }) as unknown as AuditError,
    );
    sink.failWith(null);
    sink.append({ event: { action: 'a' } });
    expect(sink.records).toHaveLength(1);
  });

  test('append after close throws', () => {
    const sink = new InMemoryAuditSink();
    sink.close();
    expect(() => sink.append({})).toThrow(/closed/);
  });
});
