import { hostname } from 'node:os';
import type {
  AnswerRecord,
  AuditSink,
  CallerFields,
  DecisionRecord,
  NetworkRecord,
  ServerRecord,
  TermgateFields,
  TerminalProcessRecord,
  UserFields,
} from '@termgate/audit';
import type { CallerContext, ExitedEvent, GateRequest, SpawnedEvent } from '@termgate/termhost';
import type { SimpleCommand, Verdict } from '../decision.js';
import { ARGS_MAX_ITEMS, ENV_NAMES_MAX_ITEMS, FieldCapper } from './field-caps.js';

/**
 * Builders of the audit record bodies (docs/AUDIT.md, "Records"), in the
 * shapes @termgate/audit defines (`record-schema.ts`), which names every
 * field once. Field names
 * follow ECS where ECS has the field; termgate's own live under `termgate`.
 * Every builder is pure; the sink adds `@timestamp`, `seq` and the chain.
 * Environment *values* never appear in a record: only the names.
 * Client-supplied fields are bounded (see `FIELD_CAPS`): a record never grows
 * with the size of a request.
 */

/** Which policy judged: recorded at start and on every create decision. */
export interface PolicyInfo {
  readonly path: string;
  /** Hex SHA-256 of the policy file's bytes. */
  readonly sha256: string;
  /** The managed layer over it (`/etc/termgate/managed.yaml`), when there is one: path and sha256 of its bytes. */
  readonly managed?: { readonly path: string; readonly sha256: string };
}

/** What the gate decided for one verb, as recorded. */
export interface RecordedDecision {
  readonly decision: Verdict;
  readonly ruleIds: readonly string[];
  readonly reason: string;
  readonly subcommands?: readonly SimpleCommand[];
  /** The cwd the command will run in, when the engine resolved it. */
  readonly resolvedCwd?: string | null;
  /** sha256 of the sandbox profile an allowed create runs under, when sandboxed. */
  readonly sandboxSha256?: string;
  /**
   * For an `ask` (and an allow an earlier `allow_always` answered): the
   * approval's id and the channel the question goes through.
   */
  readonly approval?: { readonly id: string; readonly channel?: string; readonly reused?: true };
  /** Under a managed policy layer: the layer that decided. */
  readonly layer?: 'managed' | 'workspace';
}

/** How an `ask` was answered, as recorded in `terminal-answer`. */
export interface RecordedAnswer {
  readonly approvalId: string;
  readonly outcome: string;
  readonly channel: string;
  readonly answeredBy?: string;
  readonly detail?: string;
  /** The approval id of the earlier question this answers (MCP `input_required` round trips). */
  readonly answersApprovalId?: string;
  readonly latencyMs: number;
  /** Whether the command may now run. */
  readonly allowed: boolean;
  /** The gate's reason, as the caller is told. */
  readonly reason: string;
}

const SAFE_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** POSIX-shell quoting of an argv, for `process.command_line` of argv-form terminals. */
export function quoteArgv(argv: readonly string[]): string {
  return argv.map((arg) => (SAFE_WORD.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`)).join(' ');
}

function callerFields(caller: CallerContext, cap: FieldCapper): CallerFields {
  const fields: { -readonly [Name in keyof CallerFields]: CallerFields[Name] } = {};
  if (caller.clientName !== undefined || caller.clientVersion !== undefined) {
    fields.client = {
      name: caller.clientName === undefined ? undefined : cap.text('termgate.client.name', caller.clientName),
      version:
        caller.clientVersion === undefined
          ? undefined
          : cap.text('termgate.client.version', caller.clientVersion),
    };
  }
  if (caller.protocol !== undefined) fields.protocol = caller.protocol;
  if (caller.scope !== undefined && caller.scope !== '')
    fields.scope = cap.text('termgate.scope', caller.scope);
  if (caller.principal !== undefined)
    fields.principal = { issuer: cap.text('termgate.principal.issuer', caller.principal.issuer) };
  return fields;
}

/** ECS `user`: the caller's principal's subject, when it has one (its issuer is in `callerFields`). */
function userFields(caller: CallerContext, cap: FieldCapper): { readonly user?: UserFields } {
  return caller.principal === undefined
    ? {}
    : { user: { id: cap.text('user.id', caller.principal.subject) } };
}

/** The caller's `user` and `termgate` fields, capped, with `truncated` when a cap applied. */
function callerAndCaps(caller: CallerContext): {
  readonly user?: UserFields;
  readonly termgate: CallerFields;
} {
  const cap = new FieldCapper();
  const user = userFields(caller, cap);
  return { ...user, termgate: { ...callerFields(caller, cap), ...cap.fields() } };
}

function commandLine(request: GateRequest): string {
  const { spec } = request;
  return spec.args === null ? spec.command : quoteArgv([spec.command, ...spec.args]);
}

/** `terminal-<verb>`: one gate decision. `policy` is set for `create`. */
export function decisionEvent(
  request: GateRequest,
  decided: RecordedDecision,
  policy?: PolicyInfo,
): DecisionRecord {
  const allowed = decided.decision === 'allow';
  const asks = decided.decision === 'ask';
  const { spec } = request;
  const isCreate = request.verb === 'create';
  const cwd = decided.resolvedCwd ?? spec.cwd;
  const cap = new FieldCapper();
  const line = cap.text('process.command_line', commandLine(request));
  const caller = callerFields(request.caller, cap);
  const user = userFields(request.caller, cap);
  return {
    ...user,
    event: {
      kind: 'event',
      category: ['process'],
      // An ask is neither: its `terminal-answer` record says how it ended.
      type: asks ? ['info'] : ['info', allowed ? 'allowed' : 'denied'],
      action: `terminal-${request.verb}`,
      outcome: asks ? 'unknown' : allowed ? 'success' : 'failure',
      reason: cap.text('event.reason', decided.reason),
    },
    process: isCreate
      ? {
          command_line: line,
          args: cap.list('process.args', spec.argv, ARGS_MAX_ITEMS),
          working_directory: cap.text('process.working_directory', cwd),
        }
      : { command_line: line },
    ...(decided.ruleIds.length > 0 ? { rule: { id: [...decided.ruleIds] } } : {}),
    termgate: {
      terminal_id: cap.text('termgate.terminal_id', String(request.terminalId)),
      verb: request.verb,
      decision: decided.decision,
      ...(isCreate
        ? {
            env_names: cap.list('termgate.env_names', Object.keys(spec.env).sort(), ENV_NAMES_MAX_ITEMS),
            ...(cwd !== spec.cwd ? { cwd_requested: cap.text('termgate.cwd_requested', spec.cwd) } : {}),
            subcommands: cap.items('termgate.subcommands', decided.subcommands ?? []),
            ...(decided.sandboxSha256 !== undefined ? { sandbox: { sha256: decided.sandboxSha256 } } : {}),
            ...(decided.approval !== undefined ? { approval: { ...decided.approval } } : {}),
          }
        : {}),
      ...(policy !== undefined
        ? {
            policy: {
              sha256: policy.sha256,
              ...(policy.managed !== undefined && { managed: { sha256: policy.managed.sha256 } }),
              ...(decided.layer !== undefined && { layer: decided.layer }),
            },
          }
        : {}),
      ...caller,
      ...cap.fields(),
    },
  };
}

/**
 * `terminal-answer`: how a person (or the lack of one) answered an `ask`.
 * `termgate.decision` is what followed (allow or deny; `ask` while the
 * question is still open, outcome `pending`); `termgate.approval`
 * tells a person's denial (`outcome: deny`) from a question nobody answered
 * (`cancelled`, `timeout`, `unavailable`, `pending`).
 */
export function answerEvent(request: GateRequest, answer: RecordedAnswer): AnswerRecord {
  // `pending`: the question is still open (it travels in the result): neither allowed nor denied yet.
  const open = answer.outcome === 'pending';
  const cap = new FieldCapper();
  const line = cap.text('process.command_line', commandLine(request));
  const caller = callerFields(request.caller, cap);
  const user = userFields(request.caller, cap);
  return {
    ...user,
    event: {
      kind: 'event',
      category: ['process'],
      type: open ? ['info'] : ['info', answer.allowed ? 'allowed' : 'denied'],
      action: 'terminal-answer',
      outcome: open ? 'unknown' : answer.allowed ? 'success' : 'failure',
      reason: cap.text('event.reason', answer.reason),
      // ECS durations are nanoseconds: how long the question waited for its answer.
      duration: Math.round(answer.latencyMs * 1e6),
    },
    process: { command_line: line },
    termgate: {
      terminal_id: cap.text('termgate.terminal_id', String(request.terminalId)),
      verb: request.verb,
      decision: answer.allowed ? 'allow' : open ? 'ask' : 'deny',
      approval: {
        id: answer.approvalId,
        outcome: answer.outcome,
        channel: cap.text('termgate.approval.channel', answer.channel),
        ...(answer.answeredBy !== undefined && {
          answered_by: cap.text('termgate.approval.answered_by', answer.answeredBy),
        }),
        ...(answer.detail !== undefined && { detail: cap.text('termgate.approval.detail', answer.detail) }),
        ...(answer.answersApprovalId !== undefined && {
          answers: cap.text('termgate.approval.answers', answer.answersApprovalId),
        }),
        latency_ms: Math.round(answer.latencyMs),
      },
      ...caller,
      ...cap.fields(),
    },
  };
}

/**
 * `terminal-spawn`: the process exists; `sandboxSha256` names the profile it
 * is confined to, `approvalId` the approval (its `terminal-answer`) it ran on.
 */
export function spawnEvent(
  event: SpawnedEvent,
  sandboxSha256?: string,
  approvalId?: string,
): TerminalProcessRecord {
  const { user, termgate: caller } = callerAndCaps(event.caller);
  return {
    ...(user !== undefined && { user }),
    event: {
      kind: 'event',
      category: ['process'],
      type: ['start'],
      action: 'terminal-spawn',
      outcome: 'success',
    },
    process: { pid: event.pid },
    termgate: {
      terminal_id: event.terminalId,
      ...(sandboxSha256 !== undefined ? { sandbox: { sha256: sandboxSha256 } } : {}),
      ...(approvalId !== undefined ? { approval: { id: approvalId } } : {}),
      ...caller,
    },
  };
}

/** `terminal-exit`: the process ended; `pid` when the spawn was seen. */
export function exitEvent(event: ExitedEvent, pid?: number): TerminalProcessRecord {
  const { exitCode, signal, timedOut } = event.exitStatus;
  const { user, termgate: caller } = callerAndCaps(event.caller);
  return {
    ...(user !== undefined && { user }),
    event: {
      kind: 'event',
      category: ['process'],
      type: ['end'],
      action: 'terminal-exit',
      outcome: exitCode === 0 ? 'success' : 'failure',
      // ECS durations are nanoseconds.
      duration: Math.round(event.durationMs * 1e6),
    },
    process: {
      ...(pid !== undefined ? { pid } : {}),
      ...(exitCode !== null ? { exit_code: exitCode } : {}),
    },
    termgate: {
      terminal_id: event.terminalId,
      signal,
      timed_out: timedOut,
      total_bytes: event.totalBytes,
      dropped_bytes: event.droppedBytes,
      output_sha256: event.outputSha256,
      ...(event.exitStatus.processesLeft === true && { processes_left: true }),
      ...caller,
    },
  };
}

export interface ServerStartInfo {
  readonly policy: PolicyInfo;
  /** How commands are confined: the policy's sandbox mode and network. */
  readonly sandbox?: {
    readonly mode: string;
    readonly network: string | readonly string[];
    /** Each confinement layer in force (identity, view, sockets, filter, limits, …), one line each. */
    readonly layers?: Readonly<Record<string, string>>;
  };
  /** termgate's version (also in `service.version` when the sink was given it). */
  readonly version: string;
  /** Defaults to this process. */
  readonly pid?: number;
}

export interface ServerStopInfo {
  /** Why the server stops, e.g. `"SIGTERM"` or `"stdin closed"`. */
  readonly reason?: string;
  readonly pid?: number;
}

/**
 * `server-start`. On a new file this is the anchor record: the sink adds the
 * chain's `nonce` to it. Names the process (`process.pid`, `host.hostname`).
 */
export function serverStartEvent(info: ServerStartInfo): ServerRecord {
  return {
    event: {
      kind: 'event',
      category: ['process'],
      type: ['start'],
      action: 'server-start',
      outcome: 'success',
    },
    process: { pid: info.pid ?? process.pid },
    // With the pid, how `audit verify` tells a trail a live server still writes from a cut one.
    host: { hostname: hostname() },
    termgate: {
      version: info.version,
      policy: {
        path: info.policy.path,
        sha256: info.policy.sha256,
        ...(info.policy.managed !== undefined && {
          managed: { path: info.policy.managed.path, sha256: info.policy.managed.sha256 },
        }),
      },
      ...(info.sandbox !== undefined
        ? {
            sandbox: {
              ...info.sandbox,
              ...(info.sandbox.layers !== undefined && { layers: { ...info.sandbox.layers } }),
            },
          }
        : {}),
    },
  };
}

/** A connection a sandboxed command made through the sandbox's proxy. */
export interface NetworkConnection {
  readonly host: string;
  readonly port: number;
  readonly method: string;
  /** The terminal whose proxy credential the request carried; `null` when none was valid. */
  readonly terminalId?: string | null;
  /** How many connections this record stands for; absent means 1. */
  readonly count?: number;
  /** Set when the record counts a window's repeats (the proxy folds a flood): the window's length. */
  readonly windowMs?: number;
}

/** A connection the proxy refused, and why (default `allowlist`). */
export interface NetworkRefusal extends NetworkConnection {
  readonly reason?: 'allowlist' | 'credential' | 'connections';
}

const REFUSAL_RULE: Readonly<Record<NonNullable<NetworkRefusal['reason']>, string>> = {
  allowlist: 'sandbox.network.allow',
  credential: 'sandbox.network.credential',
  connections: 'sandbox.network.connections',
};

function refusalReason(refusal: NetworkRefusal): string {
  switch (refusal.reason ?? 'allowlist') {
    case 'credential':
      return 'the request carried no valid proxy credential of a running terminal';
    case 'connections':
      return 'the terminal had its share of proxy connections open';
    default:
      return `${refusal.host} is not in the sandbox's network allowlist`;
  }
}

function connectionFields(
  connection: NetworkConnection,
  key: 'refusals' | 'connections',
): Pick<NetworkRecord, 'destination' | 'http'> & { readonly termgate?: TermgateFields } {
  const folded = connection.windowMs !== undefined;
  const counted = folded || (connection.count !== undefined && connection.count !== 1);
  const terminal = connection.terminalId ?? null;
  return {
    destination: { domain: connection.host, port: connection.port },
    http: { request: { method: connection.method } },
    ...(terminal !== null || counted
      ? {
          termgate: {
            ...(terminal !== null && { terminal_id: terminal }),
            ...(counted && { [key]: connection.count ?? 1 }),
            ...(folded && { window_ms: connection.windowMs }),
          },
        }
      : {}),
  };
}

/**
 * `network-refused`: the sandbox's proxy refused a connection. It names the
 * terminal (`termgate.terminal_id`) whose credential the request carried; a
 * request without a valid one is refused for that (`rule.id`
 * `sandbox.network.credential`) and names none. A record with
 * `termgate.refusals` counts that many refusals of the same target by the
 * same terminal within `termgate.window_ms`.
 */
export function networkRefusedEvent(refusal: NetworkRefusal): NetworkRecord {
  const why = refusalReason(refusal);
  return {
    event: {
      kind: 'event',
      category: ['network'],
      type: ['connection', 'denied'],
      action: 'network-refused',
      outcome: 'failure',
      reason:
        refusal.windowMs !== undefined
          ? `${why} (refused ${refusal.count ?? 1} more times within ${refusal.windowMs} ms)`
          : why,
    },
    ...connectionFields(refusal, 'refusals'),
    rule: { id: [REFUSAL_RULE[refusal.reason ?? 'allowlist']] },
  };
}

/**
 * `network-allowed`: the sandbox's proxy let a terminal's connection
 * through (an allowed host). Folded like refusals: the first connection of
 * a terminal to a target in a window at once, its repeats as one record
 * with `termgate.connections` and `termgate.window_ms`.
 */
export function networkAllowedEvent(connection: NetworkConnection): NetworkRecord {
  return {
    event: {
      kind: 'event',
      category: ['network'],
      type: ['connection', 'allowed'],
      action: 'network-allowed',
      outcome: 'success',
    },
    ...connectionFields(connection, 'connections'),
    rule: { id: ['sandbox.network.allow'] },
  };
}

export function serverStopEvent(info: ServerStopInfo = {}): ServerRecord {
  return {
    event: {
      kind: 'event',
      category: ['process'],
      type: ['end'],
      action: 'server-stop',
      outcome: 'success',
      ...(info.reason !== undefined ? { reason: info.reason } : {}),
    },
    process: { pid: info.pid ?? process.pid },
  };
}

/** Appends `server-start`. Throws what the sink throws: the server must not start without it. */
export function recordServerStart(sink: AuditSink, info: ServerStartInfo): void {
  sink.append(serverStartEvent(info));
}

/** Appends `server-stop`. Throws what the sink throws; the caller decides whether to log and go on. */
export function recordServerStop(sink: AuditSink, info?: ServerStopInfo): void {
  sink.append(serverStopEvent(info));
}
