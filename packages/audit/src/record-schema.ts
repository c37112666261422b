/**
 * The records termgate writes (docs/AUDIT.md, "Records"), as types: the one
 * place their field names are defined. ECS field sets where ECS has the
 * field (`event`, `process`, `rule`, `host`, `destination`, `http`, `user`),
 * termgate's own under `termgate`. The sink adds the envelope
 * (`@timestamp`, `log`, `ecs`, `service`) and the chain (`seq`, `prev_hash`,
 * `nonce`, `prev_file`, `checkpoint`, `hash`; `record-fields.ts`).
 *
 * Writers build these shapes (`@termgate/policy`'s `audit-events/`, the
 * sinks here); readers (`query.ts`, `summary.ts`, `ask-round-trips.ts`,
 * `trail-writers.ts`, `report/`) read a record back through
 * `readRecordGroups` and `groupOf`, with the same names. A record read back
 * is untrusted: every value is `unknown` until checked.
 */

/** `event.action` of every record termgate writes. */
export type AuditAction =
  | 'server-start'
  | 'server-stop'
  | `terminal-${'create' | 'output' | 'wait' | 'kill' | 'release'}`
  | 'terminal-answer'
  | 'terminal-spawn'
  | 'terminal-exit'
  | 'network-refused'
  | 'network-allowed'
  | 'audit-checkpoint'
  | 'audit-tampering';

/** ECS `event.*`. */
export type EventFields = {
  readonly kind: 'event' | 'alert';
  readonly category: readonly string[];
  readonly type: readonly string[];
  readonly action: AuditAction;
  readonly outcome: 'success' | 'failure' | 'unknown';
  readonly reason?: string;
  /** Nanoseconds (ECS). */
  readonly duration?: number;
};

/** ECS `process.*`. */
export type ProcessFields = {
  readonly command_line?: string;
  readonly args?: readonly string[];
  readonly working_directory?: string;
  readonly pid?: number;
  readonly exit_code?: number;
};

/** ECS `rule.*`: the ids of the rules that decided (none: the policy's default). */
export type RuleFields = { readonly id: readonly string[] };

/**
 * ECS `user.*`: the authenticated principal of a terminal record, `id` its
 * subject (a bearer token's `sub`); its issuer is `termgate.principal.issuer`.
 * Absent when the caller was not authenticated (stdio, ACP).
 */
export type UserFields = { readonly id: string };

/** `termgate.principal`: what names the principal beside `user.id`. */
export type PrincipalFields = { readonly issuer: string };

/** ECS `host.*`. */
export type HostFields = { readonly hostname: string };

/** ECS `destination.*` and `http.*` of a connection through the sandbox's proxy. */
export type DestinationFields = { readonly domain: string; readonly port: number };
export type HttpFields = { readonly request: { readonly method: string } };

/** The gate's decision in `termgate.decision`. */
export type RecordedVerdict = 'allow' | 'deny' | 'ask';

/** `termgate.client`: the client's self-declared name and version (undefined: not written). */
export type ClientFields = { readonly name?: string | undefined; readonly version?: string | undefined };

/** A client-supplied value that was cut (`termgate.truncated.<dotted field>`). */
export type TruncatedFields = { readonly length: number; readonly sha256: string };

/** `termgate.approval`: an ask's approval, and on `terminal-answer` how it was answered. */
export type ApprovalFields = {
  readonly id: string;
  readonly channel?: string;
  readonly reused?: true;
  readonly outcome?: string;
  readonly answered_by?: string;
  readonly detail?: string;
  /** The approval id of the earlier question this answers (MCP `input_required` round trips). */
  readonly answers?: string;
  readonly latency_ms?: number;
};

/**
 * `termgate.policy`: which policy judged. Under a managed policy layer,
 * `managed` names it too, and a decision's `layer` says which layer decided
 * (`managed` or `workspace`).
 */
export type PolicyFields = {
  readonly path?: string;
  readonly sha256: string;
  readonly managed?: { readonly path?: string; readonly sha256: string };
  readonly layer?: string;
};

/** `termgate.sandbox`: the profile a command runs under, or on `server-start` the confinement. */
export type SandboxFields = {
  readonly sha256?: string;
  readonly mode?: string;
  readonly network?: string | readonly string[];
  readonly layers?: Readonly<Record<string, string>>;
};

/**
 * One parsed simple command in `termgate.subcommands`, as the policy's
 * shell analysis gives it (`SimpleCommand` in @termgate/policy: `argv`,
 * `via`, redirections, …); readers here use `program`.
 */
export type SubcommandFields = { readonly program?: string };

/** Who asked (`termgate.*` of every terminal record). */
export type CallerFields = {
  readonly client?: ClientFields;
  readonly protocol?: string;
  readonly scope?: string;
  readonly principal?: PrincipalFields;
  readonly truncated?: Readonly<Record<string, TruncatedFields>>;
};

/** Every `termgate.*` field, by the record that writes it. */
export type TermgateFields = CallerFields & {
  readonly terminal_id?: string;
  readonly verb?: string;
  readonly decision?: RecordedVerdict;
  readonly env_names?: readonly string[];
  readonly cwd_requested?: string;
  readonly subcommands?: readonly SubcommandFields[];
  readonly sandbox?: SandboxFields;
  readonly approval?: ApprovalFields;
  readonly policy?: PolicyFields;
  readonly version?: string;
  readonly signal?: string | null;
  readonly timed_out?: boolean;
  readonly total_bytes?: number;
  readonly dropped_bytes?: number;
  /** null when the output was not hashed. */
  readonly output_sha256?: string | null;
  readonly processes_left?: true;
  readonly refusals?: number;
  readonly connections?: number;
  readonly window_ms?: number;
};

/** `terminal-<verb>`: a gate decision. */
export type DecisionRecord = {
  readonly event: EventFields;
  readonly process: ProcessFields;
  readonly rule?: RuleFields;
  readonly user?: UserFields;
  readonly termgate: TermgateFields;
};

/** `terminal-answer`: how an ask was answered. */
export type AnswerRecord = {
  readonly event: EventFields;
  readonly process: ProcessFields;
  readonly user?: UserFields;
  readonly termgate: TermgateFields;
};

/** `terminal-spawn` and `terminal-exit`. */
export type TerminalProcessRecord = {
  readonly event: EventFields;
  readonly process: ProcessFields;
  readonly user?: UserFields;
  readonly termgate: TermgateFields;
};

/** `server-start` and `server-stop`. */
export type ServerRecord = {
  readonly event: EventFields;
  readonly process: ProcessFields;
  readonly host?: HostFields;
  readonly termgate?: TermgateFields;
};

/** `network-refused` and `network-allowed`. */
export type NetworkRecord = {
  readonly event: EventFields;
  readonly destination: DestinationFields;
  readonly http: HttpFields;
  readonly termgate?: TermgateFields;
  readonly rule: RuleFields;
};

/** `audit-checkpoint` (the sink adds the `checkpoint` member) and `audit-tampering`. */
export type TamperingRecord = { readonly event: EventFields };
export type CheckpointRecord = { readonly event: EventFields };

/** The field groups of any record, as written. */
export type RecordGroups = {
  readonly event?: EventFields;
  readonly process?: ProcessFields;
  readonly rule?: RuleFields;
  readonly host?: HostFields;
  readonly destination?: DestinationFields;
  readonly http?: HttpFields;
  readonly user?: UserFields;
  readonly termgate?: TermgateFields;
};

/** A field group read back: the schema's names, every value unchecked. */
export type ReadBack<Group> = { readonly [Name in keyof Group]?: unknown };

/** The field groups of a record read back. */
export type ReadBackGroups = {
  readonly [Name in keyof RecordGroups]-?: ReadBack<NonNullable<RecordGroups[Name]>>;
};

/**
 * A group read back from `value` (a record's member): the object itself, or
 * an empty group when `value` is missing, not an object, or an array.
 */
export function groupOf<Group>(value: unknown): ReadBack<Group> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as ReadBack<Group>)
    : {};
}

/** The field groups of a record read back (see `groupOf`). */
export function readRecordGroups(record: Readonly<Record<string, unknown>>): ReadBackGroups {
  return {
    event: groupOf<EventFields>(record.event),
    process: groupOf<ProcessFields>(record.process),
    rule: groupOf<RuleFields>(record.rule),
    host: groupOf<HostFields>(record.host),
    destination: groupOf<DestinationFields>(record.destination),
    http: groupOf<HttpFields>(record.http),
    user: groupOf<UserFields>(record.user),
    termgate: groupOf<TermgateFields>(record.termgate),
  };
}
