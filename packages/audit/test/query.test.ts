import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { auditField, matchesAuditQuery, readAuditRecords } from '@termgate/audit';
import { tempDir } from './support/temp-dir.js';

const decision = (at: string, verdict: string, terminal: string, command: string) => ({
  '@timestamp': at,
  termgate: { decision: verdict, terminal_id: terminal },
  process: { command_line: command },
});

describe('audit queries', () => {
  const deny = decision('2026-11-30T10:00:00.000Z', 'deny', 'abc123', 'rm -rf /');
  const allowed = decision('2026-11-30T12:00:00.000Z', 'allow', 'def456', 'npm test');
  const exit = { '@timestamp': '2026-11-30T12:00:01.000Z', termgate: { terminal_id: 'def456' } };

  test('filters are ANDed; records without the field never match its filter', () => {
    expect(matchesAuditQuery(deny, { decision: 'deny' })).toBe(true);
    expect(matchesAuditQuery(exit, { decision: 'allow' })).toBe(false);
    expect(matchesAuditQuery(allowed, { since: new Date('2026-11-30T11:00:00Z') })).toBe(true);
    expect(matchesAuditQuery(deny, { since: new Date('2026-11-30T11:00:00Z') })).toBe(false);
    expect(matchesAuditQuery(exit, { terminal: 'def' })).toBe(true);
    expect(matchesAuditQuery(deny, { grep: /rm\s+-rf/ })).toBe(true);
    expect(matchesAuditQuery(exit, { grep: /./ })).toBe(false);
    expect(matchesAuditQuery(allowed, { decision: 'allow', terminal: 'abc' })).toBe(false);
  });

  test('auditField reads nested paths', () => {
    expect(auditField(deny, 'termgate.terminal_id')).toBe('abc123');
    expect(auditField(deny, 'termgate.nope.deeper')).toBeUndefined();
  });

  test('readAuditRecords yields records and names unreadable lines', () => {
    const dir = tempDir();
    try {
      const file = join(dir.path, 'a.jsonl');
      writeFileSync(file, `${JSON.stringify(deny)}\n\n[1]\n{oops\n{"cut":`);
      expect([...readAuditRecords(file)]).toEqual([
        { line: 1, record: deny },
        { line: 3, problem: 'not a JSON object' },
        { line: 4, problem: 'not valid JSON' },
        { line: 5, problem: 'truncated last line' },
      ]);
    } finally {
      dir.cleanup();
    }
  });
});
