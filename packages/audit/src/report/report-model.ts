import { auditField } from '../query.js';

/** One terminal of the report: what was asked, what was decided, and how it ended. */
export interface ReportTerminal {
  readonly id: string;
  /** `@timestamp` of the create decision, ms; null when the trail holds no create for it. */
  start: number | null;
  /** `@timestamp` of the exit, ms; null while running, or when it never ran. */
  end: number | null;
  /** `termgate.decision` of the create: allow, deny (or a later decision such as ask). */
  decision: string | null;
  command: string | null;
  cwd: string | null;
  rules: string[];
  reason: string | null;
  envNames: string[];
  client: string | null;
  protocol: string | null;
  pid: number | null;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  /** From `event.duration` (ns) of the exit, in ms. */
  durationMs: number | null;
  totalBytes: number | null;
  droppedBytes: number | null;
  outputSha256: string | null;
  /** seq of every record about this terminal, in trail order. */
  seqs: number[];
  /** Follow-up verbs that were refused (output, wait, kill, release). */
  refusedVerbs: string[];
}

/** Everything the report shows besides the verification result. */
export interface ReportModel {
  readonly terminals: ReportTerminal[];
  readonly records: number;
  /** Records that are not about a terminal, by `event.action` (server-start, audit-checkpoint, …). */
  readonly otherActions: Record<string, number>;
  /** `@timestamp` of the first and last record, ms. */
  readonly firstAt: number | null;
  readonly lastAt: number | null;
}

const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const num = (value: unknown): number | null =>
  typeof value === 'number' && Number.isFinite(value) ? value : null;
const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];

/** Builds the report's model record by record (memory: one entry per terminal). */
export class ReportModelBuilder {
  private readonly terminals = new Map<string, ReportTerminal>();
  private records = 0;
  private readonly otherActions: Record<string, number> = {};
  private firstAt: number | null = null;
  private lastAt: number | null = null;

  add(record: Readonly<Record<string, unknown>>): void {
    this.records += 1;
    const at = Date.parse(String(record['@timestamp']));
    if (!Number.isNaN(at)) {
      this.firstAt ??= at;
      this.lastAt = at;
    }
    const action = str(auditField(record, 'event.action')) ?? '(none)';
    const id = str(auditField(record, 'termgate.terminal_id'));
    if (id === null) {
      this.otherActions[action] = (this.otherActions[action] ?? 0) + 1;
      return;
    }
    const terminal = this.terminal(id);
    const seq = num(record.seq);
    if (seq !== null) terminal.seqs.push(seq);
    terminal.client ??= str(auditField(record, 'termgate.client.name'));
    terminal.protocol ??= str(auditField(record, 'termgate.protocol'));
    switch (action) {
      case 'terminal-create':
        terminal.start = Number.isNaN(at) ? null : at;
        terminal.decision = str(auditField(record, 'termgate.decision'));
        terminal.command = str(auditField(record, 'process.command_line'));
        terminal.cwd = str(auditField(record, 'process.working_directory'));
        terminal.rules = strings(auditField(record, 'rule.id'));
        terminal.reason = str(auditField(record, 'event.reason'));
        terminal.envNames = strings(auditField(record, 'termgate.env_names'));
        break;
      case 'terminal-answer':
        // An `ask` ends as its answer says: approved (allow) or not (deny, with why).
        terminal.decision = str(auditField(record, 'termgate.decision'));
        terminal.reason = str(auditField(record, 'event.reason'));
        break;
      case 'terminal-spawn':
        terminal.pid = num(auditField(record, 'process.pid'));
        break;
      case 'terminal-exit': {
        terminal.end = Number.isNaN(at) ? null : at;
        terminal.pid ??= num(auditField(record, 'process.pid'));
        terminal.exitCode = num(auditField(record, 'process.exit_code'));
        terminal.signal = str(auditField(record, 'termgate.signal'));
        terminal.timedOut = auditField(record, 'termgate.timed_out') === true;
        const ns = num(auditField(record, 'event.duration'));
        terminal.durationMs = ns === null ? null : ns / 1e6;
        terminal.totalBytes = num(auditField(record, 'termgate.total_bytes'));
        terminal.droppedBytes = num(auditField(record, 'termgate.dropped_bytes'));
        terminal.outputSha256 = str(auditField(record, 'termgate.output_sha256'));
        break;
      }
      default: {
        const decision = str(auditField(record, 'termgate.decision'));
        if (decision !== null && decision !== 'allow') {
          terminal.refusedVerbs.push(str(auditField(record, 'termgate.verb')) ?? action);
        }
      }
    }
  }

  result(): ReportModel {
    return {
      terminals: [...this.terminals.values()],
      records: this.records,
      otherActions: this.otherActions,
      firstAt: this.firstAt,
      lastAt: this.lastAt,
    };
  }

  private terminal(id: string): ReportTerminal {
    let terminal = this.terminals.get(id);
    if (terminal === undefined) {
      terminal = {
        id,
        start: null,
        end: null,
        decision: null,
        command: null,
        cwd: null,
        rules: [],
        reason: null,
        envNames: [],
        client: null,
        protocol: null,
        pid: null,
        exitCode: null,
        signal: null,
        timedOut: false,
        durationMs: null,
        totalBytes: null,
        droppedBytes: null,
        outputSha256: null,
        seqs: [],
        refusedVerbs: [],
      };
      this.terminals.set(id, terminal);
    }
    return terminal;
  }
}
