import {
  type ApprovalFields,
  type ClientFields,
  groupOf,
  type PolicyFields,
  type PrincipalFields,
  type ReadBackGroups,
  readRecordGroups,
  type SandboxFields,
} from '../record-schema.js';

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
  /** The principal (`user.id`, with `termgate.principal.issuer` after a space in parentheses); null: none. */
  principal: string | null;
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
  /**
   * How an `ask` ended (`termgate.approval.outcome` of its answer):
   * `deny` is a person's no, `cancelled`/`timeout`/`unavailable` a question
   * nobody answered, `allow_once`/`allow_always` an approval; null when
   * nobody was asked.
   */
  approval: string | null;
  /**
   * `failed`: a record of this terminal is where verification failed;
   * `unverified`: it has records after that point, which the broken chain
   * cannot vouch for; null when verification passed it.
   */
  verification: 'failed' | 'unverified' | null;
}

/** What a `server-start` record says about the server: its policy and its sandbox. */
export interface ReportServer {
  readonly at: number | null;
  readonly version: string | null;
  readonly policyPath: string | null;
  readonly policySha256: string | null;
  /** `required` or `off`; null when the record does not say (an older server). */
  readonly sandboxMode: string | null;
  /** `none`, `all`, or the allowlist's hosts. */
  readonly network: string | readonly string[] | null;
}

/** Everything the report shows besides the verification result. */
export interface ReportModel {
  readonly terminals: ReportTerminal[];
  readonly records: number;
  /** Records that are not about a terminal, by `event.action` (server-start, audit-checkpoint, …). */
  readonly otherActions: Record<string, number>;
  /** One per `server-start` record, in trail order. */
  readonly servers: ReportServer[];
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
  private readonly servers: ReportServer[] = [];

  add(record: Readonly<Record<string, unknown>>): void {
    this.records += 1;
    const at = Date.parse(String(record['@timestamp']));
    if (!Number.isNaN(at)) {
      this.firstAt ??= at;
      this.lastAt = at;
    }
    const fields = readRecordGroups(record);
    const { event, process: proc, rule, termgate } = fields;
    const action = str(event.action) ?? '(none)';
    const id = str(termgate.terminal_id);
    if (id === null) {
      this.otherActions[action] = (this.otherActions[action] ?? 0) + 1;
      if (action === 'server-start') this.servers.push(serverOf(fields, Number.isNaN(at) ? null : at));
      return;
    }
    const terminal = this.terminal(id);
    const seq = num(record.seq);
    if (seq !== null) terminal.seqs.push(seq);
    terminal.client ??= str(groupOf<ClientFields>(termgate.client).name);
    terminal.principal ??= principalOf(fields);
    terminal.protocol ??= str(termgate.protocol);
    switch (action) {
      case 'terminal-create':
        terminal.start = Number.isNaN(at) ? null : at;
        terminal.decision = str(termgate.decision);
        terminal.command = str(proc.command_line);
        terminal.cwd = str(proc.working_directory);
        terminal.rules = strings(rule.id);
        terminal.reason = str(event.reason);
        terminal.envNames = strings(termgate.env_names);
        break;
      case 'terminal-answer':
        // An `ask` ends as its answer says: approved (allow) or not (deny, with why).
        terminal.decision = str(termgate.decision);
        terminal.reason = str(event.reason);
        terminal.approval = str(groupOf<ApprovalFields>(termgate.approval).outcome);
        break;
      case 'terminal-spawn':
        terminal.pid = num(proc.pid);
        break;
      case 'terminal-exit': {
        terminal.end = Number.isNaN(at) ? null : at;
        terminal.pid ??= num(proc.pid);
        terminal.exitCode = num(proc.exit_code);
        terminal.signal = str(termgate.signal);
        terminal.timedOut = termgate.timed_out === true;
        const ns = num(event.duration);
        terminal.durationMs = ns === null ? null : ns / 1e6;
        terminal.totalBytes = num(termgate.total_bytes);
        terminal.droppedBytes = num(termgate.dropped_bytes);
        terminal.outputSha256 = str(termgate.output_sha256);
        break;
      }
      default: {
        const decision = str(termgate.decision);
        if (decision !== null && decision !== 'allow') {
          terminal.refusedVerbs.push(str(termgate.verb) ?? action);
        }
      }
    }
  }

  /**
   * The model; `brokenAtSeq`: the seq where verification failed (the
   * terminal holding the first record from there is marked `failed`, the
   * others with records from there `unverified`).
   */
  result(brokenAtSeq?: number): ReportModel {
    const terminals = [...this.terminals.values()];
    if (brokenAtSeq !== undefined) {
      // The first record at or after the break (the edited one, or the one after a gap) failed.
      const after = terminals.flatMap((t) => t.seqs).filter((seq) => seq >= brokenAtSeq);
      const failedSeq = after.length === 0 ? null : Math.min(...after);
      for (const t of terminals) {
        if (failedSeq !== null && t.seqs.includes(failedSeq)) t.verification = 'failed';
        else if (t.seqs.some((seq) => seq >= brokenAtSeq)) t.verification = 'unverified';
      }
    }
    return {
      terminals,
      records: this.records,
      otherActions: this.otherActions,
      servers: this.servers,
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
        principal: null,
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
        approval: null,
        verification: null,
      };
      this.terminals.set(id, terminal);
    }
    return terminal;
  }
}

function serverOf({ termgate }: ReadBackGroups, at: number | null): ReportServer {
  const sandbox = groupOf<SandboxFields>(termgate.sandbox);
  const policy = groupOf<PolicyFields>(termgate.policy);
  const network = sandbox.network;
  return {
    at,
    version: str(termgate.version),
    policyPath: str(policy.path),
    policySha256: str(policy.sha256),
    sandboxMode: str(sandbox.mode),
    network: typeof network === 'string' ? network : Array.isArray(network) ? strings(network) : null,
  };
}

/** The record's principal as the report shows it: `subject (issuer)`, or null without one. */
function principalOf(fields: ReadBackGroups): string | null {
  const subject = str(fields.user.id);
  if (subject === null) return null;
  const issuer = str(groupOf<PrincipalFields>(fields.termgate.principal).issuer);
  return issuer === null ? subject : `${subject} (${issuer})`;
}
