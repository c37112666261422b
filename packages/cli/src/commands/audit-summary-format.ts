import type { AuditSummary } from '@termgate/audit';

/** The text of `termgate audit show --summary`; `printable` escapes recorded names for the terminal. */
export function formatSummary(summary: AuditSummary, printable: (text: string) => string): string {
  const lines = [`${summary.records} records, ${summary.commands} commands (terminal-create)`];
  const section = (title: string, counts: ReadonlyMap<string, number>) => {
    lines.push('', title);
    if (counts.size === 0) lines.push('  (none)');
    const width = Math.max(0, ...[...counts.values()].map((n) => String(n).length));
    for (const [key, count] of counts) lines.push(`  ${String(count).padStart(width)}  ${printable(key)}`);
  };
  section('by decision:', summary.byDecision);
  section('by rule:', summary.byRule);
  section('by program:', summary.byProgram);
  return `${lines.join('\n')}\n`;
}
