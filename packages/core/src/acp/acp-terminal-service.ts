import { isAbsolute } from 'node:path';
import {
  type Approver,
  type CallerContext,
  type ExitStatus,
  TermhostError,
  type TerminalHost,
  type TerminalSpec,
} from '@termgate/termhost';
import { gateDenialReason } from '../gate-denial.js';
import { ProtocolError } from '../jsonrpc/protocol-error.js';
import type { SchemaValidator, SchemaViolation, Validate } from '../ports/schema-validator.js';
import { AcpErrorCode } from './acp-error-codes.js';
import {
  ACP_PROTOCOL,
  ACP_TERMINAL_METHODS,
  type AcpTerminalMethod,
  acpSessionScope,
} from './acp-methods.js';
import { ACP_TERMINAL_PARAMS_SCHEMAS } from './acp-terminal-schemas.js';

export type AcpResult = Record<string, unknown>;

export interface AcpHandleOptions {
  /**
   * Aborted when the agent cancels the request (`$/cancel_request`). Only
   * `terminal/wait_for_exit` stops early; it then rejects with -32800. The
   * other methods finish (a half-done `create` would leak a process).
   */
  readonly signal?: AbortSignal;
}

export interface AcpTerminalServiceOptions {
  /** Recorded in every caller context (the audit trail's client name), e.g. the agent's `agentInfo.name`. */
  readonly clientName?: string;
  readonly clientVersion?: string;
  /**
   * Who asks a person when the policy's decision is `ask`, per session
   * (e.g. `session/request_permission` to the editor). Absent, or
   * `undefined` for a session: an ask is refused as not askable.
   */
  readonly approverFor?: (sessionId: string) => Approver | undefined;
}

/** `data` of a -32002 for an unknown or released terminal. */
export interface TerminalNotFoundData {
  readonly terminalId: string;
}

/** `data` of a {@link AcpErrorCode.PolicyDenied} refusal. */
export interface PolicyDeniedData {
  readonly verb: string;
  readonly reason: string;
  readonly ruleIds: readonly string[];
  readonly terminalId?: string;
  /** Set when the policy asked a person and the answer was not an approval: `deny`, `cancelled`, `timeout`, `unavailable`. */
  readonly approval?: string;
}

function exitFields(status: ExitStatus): { exitCode: number | null; signal: string | null } {
  return { exitCode: status.exitCode, signal: status.signal };
}

function describeViolations(violations: readonly SchemaViolation[]): string {
  return violations
    .map((v) => `${v.path === '' ? 'params' : `"${v.path.slice(1).replaceAll('/', '.')}"`} ${v.message}`)
    .join('; ');
}

/**
 * ACP v1's five client-side `terminal/*` methods over the TerminalHost port
 * (and therefore through the host's gate). It is protocol handling only: no
 * channel, no ids. Connections and the proxy route requests to `handle`.
 *
 * Mapping decisions, where ACP's terminal methods
 * (https://agentclientprotocol.com/protocol/terminals) leave a choice:
 * - Terminals are scoped per session: caller scope `acp:<sessionId>`, caller
 *   protocol `acp/1`. A terminal id from another session is unknown (-32002).
 * - `command` without `args` (absent, `null` or `[]`) is a command **line**
 *   run by the host's shell, as Zed does; with `args` it is a program
 *   exec'd with exactly those arguments, no shell.
 * - `env` is ACP's list of `{name, value}`; it becomes the host's map. For a
 *   name given twice the last pair wins.
 * - `cwd` must be absolute (else -32602); `null` or absent means the host's
 *   default directory. `outputByteLimit` `null` means the host's ceiling;
 *   larger limits are clamped by the host. Output is the newest bytes, cut at
 *   a character boundary.
 * - Results carry exactly ACP's fields: `terminal/output` adds `exitStatus`
 *   (`{exitCode, signal}`) only once the command exited; `wait_for_exit` is
 *   the flat `{exitCode, signal}`; kill and release answer `{}`.
 *
 * Errors are thrown as {@link ProtocolError}:
 * - -32602 malformed params (schema violations, relative cwd, invalid env name);
 * - -32002 unknown or released terminal, `data: {terminalId}`; also a program
 *   that does not exist (argv form only), `data: {program}`;
 * - -32010 refused by policy, `data: {verb, reason, ruleIds, terminalId?}`;
 *   the message says nothing was run and not to retry the same command;
 * - -32800 a wait cancelled through `options.signal`;
 * - -32603 anything else (spawn failure, terminal limit, host closed), with
 *   `data: {code}` naming the termhost error.
 */
export class AcpTerminalService {
  private readonly validators: ReadonlyMap<AcpTerminalMethod, Validate>;
  /** Sessions that created a terminal: what `closeAll` releases. */
  private readonly sessions = new Set<string>();
  private clientName: string | undefined;
  private clientVersion: string | undefined;
  private readonly approverFor: ((sessionId: string) => Approver | undefined) | undefined;

  constructor(
    private readonly host: TerminalHost,
    validator: SchemaValidator,
    options: AcpTerminalServiceOptions = {},
  ) {
    this.clientName = options.clientName;
    this.clientVersion = options.clientVersion;
    this.approverFor = options.approverFor;
    this.validators = new Map(
      (Object.keys(ACP_TERMINAL_PARAMS_SCHEMAS) as AcpTerminalMethod[]).map((method) => [
        method,
        validator.compile(ACP_TERMINAL_PARAMS_SCHEMAS[method]),
      ]),
    );
  }

  /** The termhost caller of one ACP session (with its approver, when there is one). */
  callerFor(sessionId: string): CallerContext {
    const approver = this.approverFor?.(sessionId);
    return {
      scope: acpSessionScope(sessionId),
      protocol: ACP_PROTOCOL,
      ...(this.clientName !== undefined && { clientName: this.clientName }),
      ...(this.clientVersion !== undefined && { clientVersion: this.clientVersion }),
      ...(approver !== undefined && { approver }),
    };
  }

  /** Names the agent in later caller contexts (e.g. from its `initialize` answer). */
  setClient(name: string, version?: string): void {
    this.clientName = name;
    this.clientVersion = version;
  }

  /** Serves one request. Resolves with its ACP result or rejects with a {@link ProtocolError}. */
  async handle(
    method: AcpTerminalMethod,
    params: unknown,
    options: AcpHandleOptions = {},
  ): Promise<AcpResult> {
    const validate = this.validators.get(method);
    if (validate === undefined) throw ProtocolError.methodNotFound(String(method));
    const violations = validate(params ?? {});
    if (violations.length > 0) {
      throw ProtocolError.invalidParams(`${method}: ${describeViolations(violations)}`);
    }
    const p = params as Record<string, unknown>;
    const sessionId = p.sessionId as string;
    const caller = this.callerFor(sessionId);
    const terminalId = p.terminalId as string;
    try {
      switch (method) {
        case ACP_TERMINAL_METHODS.create:
          return await this.create(p, caller, sessionId);
        case ACP_TERMINAL_METHODS.output: {
          const snapshot = await this.host.output(terminalId, caller);
          return snapshot.exitStatus === null
            ? { output: snapshot.output, truncated: snapshot.truncated }
            : {
                output: snapshot.output,
                truncated: snapshot.truncated,
                exitStatus: exitFields(snapshot.exitStatus),
              };
        }
        case ACP_TERMINAL_METHODS.waitForExit: {
          options.signal?.throwIfAborted();
          const status = await this.host.waitForExit(
            terminalId,
            options.signal ? { signal: options.signal } : {},
            caller,
          );
          return exitFields(status);
        }
        case ACP_TERMINAL_METHODS.kill:
          await this.host.kill(terminalId, caller);
          return {};
        case ACP_TERMINAL_METHODS.release:
          await this.host.release(terminalId, caller);
          return {};
      }
    } catch (error) {
      if (options.signal?.aborted && method === ACP_TERMINAL_METHODS.waitForExit) {
        throw new ProtocolError(AcpErrorCode.RequestCancelled, 'Request cancelled');
      }
      throw toProtocolError(error, method, typeof terminalId === 'string' ? terminalId : undefined);
    }
  }

  /** Kills and releases every terminal of one session. Not gated (shutdown). */
  async closeSession(sessionId: string): Promise<void> {
    this.sessions.delete(sessionId);
    await this.host.closeAll(acpSessionScope(sessionId));
  }

  /** Kills and releases the terminals of every session this service created terminals for. */
  async closeAll(): Promise<void> {
    await Promise.all([...this.sessions].map((sessionId) => this.closeSession(sessionId)));
  }

  private async create(
    p: Record<string, unknown>,
    caller: CallerContext,
    sessionId: string,
  ): Promise<AcpResult> {
    const spec: { -readonly [K in keyof TerminalSpec]: TerminalSpec[K] } = { command: p.command as string };
    const args = p.args as string[] | null | undefined;
    if (args && args.length > 0) spec.args = args;
    const cwd = p.cwd as string | null | undefined;
    if (cwd !== undefined && cwd !== null) {
      if (!isAbsolute(cwd)) {
        throw ProtocolError.invalidParams(
          `terminal/create: "cwd" must be an absolute path, got ${JSON.stringify(cwd)}`,
        );
      }
      spec.cwd = cwd;
    }
    const env = p.env as { name: string; value: string }[] | null | undefined;
    if (env && env.length > 0) {
      // No prototype: a variable named `__proto__` is a variable like any other (and the policy judges it).
      const map: Record<string, string> = Object.create(null);
      // Duplicate names: the last pair wins.
      for (const pair of env) map[pair.name] = pair.value;
      spec.env = map;
    }
    const limit = p.outputByteLimit as number | null | undefined;
    if (limit !== undefined && limit !== null)
      spec.outputByteLimit = Math.min(limit, Number.MAX_SAFE_INTEGER);
    this.sessions.add(sessionId);
    const terminalId = await this.host.create(spec, caller);
    return { terminalId };
  }
}

/** Translates a local termhost error into the ACP wire error (see {@link AcpTerminalService}). */
export function toProtocolError(error: unknown, method: string, terminalId?: string): ProtocolError {
  if (error instanceof ProtocolError) return error;
  if (!TermhostError.is(error)) {
    return ProtocolError.internal(error instanceof Error ? error.message : String(error));
  }
  const details = error.details;
  switch (error.code) {
    case 'TERMINAL_NOT_FOUND': {
      const data: TerminalNotFoundData = { terminalId: String(details.terminalId) };
      return new ProtocolError(
        AcpErrorCode.ResourceNotFound,
        `Terminal not found: ${data.terminalId} (never created in this session, or already released)`,
        data,
      );
    }
    case 'GATE_DENIED': {
      const reason = typeof details.reason === 'string' ? details.reason : error.message;
      const ruleIds = Array.isArray(details.ruleIds) ? details.ruleIds.map(String) : [];
      const verb = typeof details.verb === 'string' ? details.verb : method;
      const data: PolicyDeniedData = {
        verb,
        reason,
        ruleIds,
        ...(terminalId !== undefined && { terminalId }),
      };
      const rules = ruleIds.length > 0 ? ` (rules: ${ruleIds.join(', ')})` : '';
      if (typeof details.approval === 'string') {
        return new ProtocolError(
          AcpErrorCode.PolicyDenied,
          `Not run: ${reason}${rules}. ${details.approval === 'deny' ? 'The user declined it; do not retry it unless the user asks you to.' : 'Ask the user before trying it again.'}`,
          { ...data, approval: details.approval },
        );
      }
      return new ProtocolError(
        AcpErrorCode.PolicyDenied,
        `Denied by policy: ${gateDenialReason(error)}${rules}. Nothing was run. Do not retry the same command; choose another approach or ask the user.`,
        data,
      );
    }
    case 'INVALID_SPEC':
    case 'CWD_NOT_FOUND':
    case 'CWD_NOT_DIRECTORY':
      return ProtocolError.invalidParams(`${method}: ${error.message}`, { code: error.code });
    case 'PROGRAM_NOT_FOUND':
      return new ProtocolError(AcpErrorCode.ResourceNotFound, error.message, {
        program: String(details.program),
      });
    default:
      return new ProtocolError(AcpErrorCode.InternalError, `${method} failed: ${error.message}`, {
        code: error.code,
      });
  }
}
