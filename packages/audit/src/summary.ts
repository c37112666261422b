import { groupOf, readRecordGroups, type SubcommandFields } from './record-schema.js';

/** Counts of `termgate audit show --summary`, over the `terminal-create` records (the commands). */
export interface AuditSummary {
  /** Every record read. */
  readonly records: number;
  /** `terminal-create` records. */
  readonly commands: number;
  /** By `termgate.decision` (any value: allow, deny, and any later one such as ask). */
  readonly byDecision: ReadonlyMap<string, number>;
  /** By rule id (`rule.id`; `(default)` when the policy's default decided). */
  readonly byRule: ReadonlyMap<string, number>;
  /** By program (`termgate.subcommands[].program`, each once per command). */
  readonly byProgram: ReadonlyMap<string, number>;
}

/** Adds records one at a time (memory is bounded by the number of distinct keys). */
export class AuditSummarizer {
  private records = 0;
  private commands = 0;
  private readonly byDecision = new Map<string, number>();
  private readonly byRule = new Map<string, number>();
  private readonly byProgram = new Map<string, number>();

  add(record: Readonly<Record<string, unknown>>): void {
    this.records += 1;
    const { event, rule, termgate } = readRecordGroups(record);
    if (event.action !== 'terminal-create') return;
    this.commands += 1;
    const decision = termgate.decision;
    bump(this.byDecision, typeof decision === 'string' ? decision : '(none)');
    const rules = rule.id;
    const ids = Array.isArray(rules) ? rules.filter((id): id is string => typeof id === 'string') : [];
    for (const id of ids.length === 0 ? ['(default)'] : new Set(ids)) bump(this.byRule, id);
    const subcommands = termgate.subcommands;
    const programs = new Set<string>();
    if (Array.isArray(subcommands)) {
      for (const sub of subcommands) {
        const program = groupOf<SubcommandFields>(sub).program;
        if (typeof program === 'string') programs.add(program);
      }
    }
    for (const program of programs) bump(this.byProgram, program);
  }

  result(): AuditSummary {
    return {
      records: this.records,
      commands: this.commands,
      byDecision: sorted(this.byDecision),
      byRule: sorted(this.byRule),
      byProgram: sorted(this.byProgram),
    };
  }
}

function bump(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

/** Most frequent first, then by name. */
function sorted(map: ReadonlyMap<string, number>): Map<string, number> {
  return new Map([...map].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)));
}
