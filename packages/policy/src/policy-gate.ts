import { isAbsolute } from 'node:path';
import type { AuditSink } from '@termgate/audit';
import type {
  ApprovalAnswer,
  ExitedEvent,
  Gate,
  GateDecision,
  GateRequest,
  SandboxProfile,
  SpawnedEvent,
  TerminalId,
  TerminalObserver,
} from '@termgate/termhost';
import { Approvals, type AskedApproval, refusalReason } from './approvals.js';
import {
  answerEvent,
  decisionEvent,
  exitEvent,
  type PolicyInfo,
  type RecordedDecision,
  spawnEvent,
} from './audit-events/events.js';
import type { PolicyDecision } from './decision.js';
import { describeCause } from './describe-cause.js';
import type { CommandJudge } from './ports/command-judge.js';
import type { SandboxProfileSource } from './ports/sandbox-profile-source.js';
import { sandboxProfileSha256 } from './sandbox/profile-digest.js';

/**
 * Decides the verbs after `create` (output, wait, kill, release). The
 * terminal passed the gate when it was created, so the default allows them.
 * This is the room for a future policy knob (e.g. "no output reads for
 * scope X"); whatever it returns is recorded like a create decision.
 */
export type FollowUpPolicy = (request: GateRequest) => RecordedDecision;

export const allowFollowUps: FollowUpPolicy = (request) => ({
  decision: 'allow',
  ruleIds: [],
  reason: `terminal ${request.terminalId} passed the gate at create`,
});

/** A computed sandbox profile, or why there is none. */
type Profiled = { readonly profile: SandboxProfile } | { readonly error: unknown };

export interface PolicyGateOptions {
  readonly followUp?: FollowUpPolicy;
  /**
   * When given and enabled, every allowed create carries the sandbox profile
   * for its cwd; its sha256 is in the decision and spawn records. A profile
   * that cannot be computed turns the allow into a refusal. When both the
   * judge and the profile answer with promises, the profile of the request's
   * cwd is computed while the judge works (and again for the judge's
   * resolved cwd when that differs); it is never reused for another create.
   */
  readonly sandbox?: SandboxProfileSource;
  /** The clock approval latencies are measured with (ms). Default `performance.now`. */
  readonly now?: () => number;
}

/**
 * The gate between a terminal host and the policy engine, and the writer of
 * the audit trail's decision and lifecycle records.
 *
 * Contract:
 * - `decide` judges, appends the decision record, and only then answers. The
 *   answer never outruns its record. It answers synchronously, except for a
 *   `create` judged by an asynchronous judge: then it returns a promise that
 *   settles after the record is appended (and never rejects).
 * - `create`: the engine judges the resolved spec (`args` null = a command
 *   line; `env` = only what the client set). An allow carries the engine's
 *   resolved cwd, so what was judged is where it runs.
 * - Fails closed: a judge that throws, rejects or answers anything but a
 *   well-formed `allow` is a deny, and a record that cannot be written turns the answer
 *   into a refusal ("audit trail unavailable: …; nothing was run").
 * - One exception, toward safety: an allowed `kill` or `release` goes ahead
 *   even when its record cannot be written, because refusing it would keep a
 *   process running. Its answer's reason says it was not recorded.
 * - `ask` (a create the policy runs only with a person's approval): the
 *   decision record (`termgate.decision: ask`, with `termgate.approval.id`)
 *   is appended first, then the caller's approver is asked, then a
 *   `terminal-answer` record is appended, and only then does the gate answer:
 *   an allow with the same cwd and sandbox an allow would have had, or a
 *   refusal whose `approval` says how the question ended. No approver, an
 *   approver that fails, or an answer that cannot be recorded is a refusal.
 *   An `allow_always` answer lets this exact line (or program and
 *   arguments) in this cwd, in this caller scope, run without asking for the
 *   gate's life whenever the policy asks for it again; a deny still wins.
 * - As a `TerminalObserver` it records `terminal-spawn` and `terminal-exit`;
 *   a spawn after an approval names it (`termgate.approval.id`).
 *   A failed append there is thrown (the host logs it); the command already
 *   runs, and the next decision will be refused by the failed sink.
 */
export class PolicyGate implements Gate, TerminalObserver {
  private readonly followUp: FollowUpPolicy;
  private readonly sandbox: SandboxProfileSource | null;
  /** pid of each spawned, not yet exited terminal, for its exit record. */
  private readonly pids = new Map<TerminalId, number>();
  /** sha256 of each allowed create's sandbox profile, for its spawn record. */
  private readonly profiles = new Map<TerminalId, string>();
  /** The approval each approved create ran on, for its spawn record. */
  private readonly approvedBy = new Map<TerminalId, string>();
  private readonly approvals: Approvals;

  constructor(
    private readonly judge: CommandJudge,
    private readonly sink: AuditSink,
    private readonly policy: PolicyInfo,
    options: PolicyGateOptions = {},
  ) {
    this.followUp = options.followUp ?? allowFollowUps;
    this.sandbox = options.sandbox?.enabled ? options.sandbox : null;
    this.approvals = new Approvals(options.now ?? (() => performance.now()));
  }

  decide(request: GateRequest): GateDecision | Promise<GateDecision> {
    return request.verb === 'create' ? this.decideCreate(request) : this.decideFollowUp(request);
  }

  onSpawned(event: SpawnedEvent): void {
    this.pids.set(event.terminalId, event.pid);
    const profile = this.profiles.get(event.terminalId);
    this.profiles.delete(event.terminalId);
    const approval = this.approvedBy.get(event.terminalId);
    this.approvedBy.delete(event.terminalId);
    this.sink.append(spawnEvent(event, profile, approval));
  }

  onExited(event: ExitedEvent): void {
    const pid = this.pids.get(event.terminalId);
    this.pids.delete(event.terminalId);
    this.sink.append(exitEvent(event, pid));
  }

  private decideCreate(request: GateRequest): GateDecision | Promise<GateDecision> {
    const { spec } = request;
    let answer: PolicyDecision | Promise<PolicyDecision>;
    try {
      answer = this.judge.judge({
        command: spec.command,
        args: spec.args,
        cwd: spec.cwd,
        env: { ...spec.env },
      });
    } catch (error) {
      return this.answerCreate(request, judgeFailed(error), undefined);
    }
    if (!isPromiseLike(answer)) return this.profiled(request, checkedAnswer(answer), null);
    // While the judge works: the profile of the cwd the request names, for this create only.
    const early = this.sandbox !== null ? this.profileOf(spec.cwd) : null;
    if (early !== null && isPromiseLike(early)) early.then(undefined, () => {}); // a deny never awaits it
    return Promise.resolve(answer).then(
      (settled) => this.profiled(request, checkedAnswer(settled), early),
      (error: unknown) => this.profiled(request, judgeFailed(error), early),
    );
  }

  /** The sandbox profile of `cwd`, or what made it fail (never throws). */
  private profileOf(cwd: string): Profiled | Promise<Profiled> {
    let profile: SandboxProfile | Promise<SandboxProfile>;
    try {
      profile = (this.sandbox as SandboxProfileSource).profile(cwd);
    } catch (error) {
      return { error };
    }
    if (!isPromiseLike(profile)) return { profile };
    return Promise.resolve(profile).then(
      (computed) => ({ profile: computed }),
      (error: unknown) => ({ error }),
    );
  }

  /** Adds the sandbox profile (an ask gets the one an allow would have), then records and answers. */
  private profiled(
    request: GateRequest,
    judged: RecordedDecision,
    early: Profiled | Promise<Profiled> | null,
  ): GateDecision | Promise<GateDecision> {
    if (judged.decision === 'deny' || this.sandbox === null)
      return this.answerCreate(request, judged, undefined);
    const cwd = judged.resolvedCwd ?? request.spec.cwd;
    const profiled = early !== null && cwd === request.spec.cwd ? early : this.profileOf(cwd);
    if (!isPromiseLike(profiled)) return this.answerCreate(request, judged, profiled);
    return Promise.resolve(profiled).then((settled) => this.answerCreate(request, judged, settled));
  }

  /**
   * Records the judged create, then answers it (a refusal when the record
   * cannot be written). An `ask` is asked after its record, and answered once
   * the answer is recorded too.
   */
  private answerCreate(
    request: GateRequest,
    judged: RecordedDecision,
    profiled: Profiled | undefined,
  ): GateDecision | Promise<GateDecision> {
    let sandbox: SandboxProfile | undefined;
    let decided = judged;
    if (profiled !== undefined) {
      if ('profile' in profiled) {
        sandbox = profiled.profile;
        decided = { ...judged, sandboxSha256: sandboxProfileSha256(sandbox) };
      } else {
        decided = {
          decision: 'deny',
          ruleIds: [],
          reason: `the sandbox profile could not be computed: ${describeCause(profiled.error)}; nothing was run`,
          subcommands: judged.subcommands ?? [],
          resolvedCwd: judged.resolvedCwd ?? null,
        };
      }
    }
    let asked: AskedApproval | undefined;
    if (decided.decision === 'ask') {
      const earlier = this.approvals.approvedAlways(request, decided);
      if (earlier !== undefined) {
        decided = {
          ...decided,
          decision: 'allow',
          reason: `approved earlier for every run of this exact line (approval ${earlier}): ${decided.reason}`,
          approval: { id: earlier, reused: true },
        };
      } else {
        asked = this.approvals.prepare(request, decided);
        decided = { ...decided, approval: { id: asked.question.approvalId, channel: asked.channel } };
      }
    }
    try {
      this.sink.append(decisionEvent(request, decided, this.policy));
    } catch (error) {
      return { allow: false, reason: `audit trail unavailable: ${describeCause(error)}; nothing was run` };
    }
    if (asked !== undefined) return this.askAndAnswer(request, decided, asked, sandbox);
    if (decided.decision !== 'allow')
      return { allow: false, reason: decided.reason, ruleIds: decided.ruleIds };
    return this.allowCreate(request, decided, sandbox);
  }

  /** Asks (the ask is recorded), records the answer, then answers the create. Never rejects. */
  private async askAndAnswer(
    request: GateRequest,
    decided: RecordedDecision,
    asked: AskedApproval,
    sandbox: SandboxProfile | undefined,
  ): Promise<GateDecision> {
    const answer: ApprovalAnswer = await asked.answer();
    const allowed = answer.outcome === 'allow_once' || answer.outcome === 'allow_always';
    const reason = allowed
      ? `approved by a person (${answer.outcome}${answer.answeredBy ? `, answered by ${answer.answeredBy}` : ''} via ${answer.channel}): ${decided.reason}`
      : refusalReason(answer, decided.reason);
    try {
      this.sink.append(
        answerEvent(request, {
          approvalId: asked.question.approvalId,
          outcome: answer.outcome,
          channel: answer.channel,
          ...(answer.answeredBy !== undefined && { answeredBy: answer.answeredBy }),
          ...(answer.detail !== undefined && { detail: answer.detail }),
          ...(answer.answersApprovalId !== undefined && { answersApprovalId: answer.answersApprovalId }),
          latencyMs: asked.latencyMs(),
          allowed,
          reason,
        }),
      );
    } catch (error) {
      return {
        allow: false,
        reason: `audit trail unavailable: ${describeCause(error)}; the answer was not recorded, so nothing was run`,
        approval: answer.outcome,
      };
    }
    if (!allowed) return { allow: false, reason, ruleIds: decided.ruleIds, approval: answer.outcome };
    if (answer.outcome === 'allow_always') this.approvals.rememberAlways(request, decided, asked);
    this.approvedBy.set(request.terminalId, asked.question.approvalId);
    return this.allowCreate(request, { ...decided, reason }, sandbox);
  }

  private allowCreate(
    request: GateRequest,
    decided: RecordedDecision,
    sandbox: SandboxProfile | undefined,
  ): GateDecision {
    if (decided.sandboxSha256 !== undefined) this.profiles.set(request.terminalId, decided.sandboxSha256);
    if (decided.approval?.reused) this.approvedBy.set(request.terminalId, decided.approval.id);
    return {
      allow: true,
      reason: decided.reason,
      ...(decided.resolvedCwd != null && { cwd: decided.resolvedCwd }),
      ...(sandbox !== undefined && { sandbox }),
    };
  }

  private decideFollowUp(request: GateRequest): GateDecision {
    let decided: RecordedDecision;
    try {
      decided = wellFormed(this.followUp(request)) ?? {
        decision: 'deny',
        ruleIds: [],
        reason: 'follow-up policy returned an invalid decision',
      };
    } catch (error) {
      decided = { decision: 'deny', ruleIds: [], reason: `follow-up policy failed: ${describeCause(error)}` };
    }
    const allowed = decided.decision === 'allow';
    try {
      this.sink.append(decisionEvent(request, decided));
    } catch (error) {
      const unavailable = `audit trail unavailable: ${describeCause(error)}`;
      if (allowed && (request.verb === 'kill' || request.verb === 'release')) {
        return { allow: true, reason: `${unavailable}; the ${request.verb} goes ahead unrecorded` };
      }
      return { allow: false, reason: `${unavailable}; the ${request.verb} was refused` };
    }
    return allowed
      ? { allow: true, reason: decided.reason }
      : { allow: false, reason: decided.reason, ruleIds: decided.ruleIds };
  }
}

/** A deny that says why the judge gave no answer. */
function judgeFailed(error: unknown): RecordedDecision {
  return {
    decision: 'deny',
    ruleIds: [],
    reason: `policy engine failed: ${describeCause(error)}; nothing was run`,
  };
}

/** The judge's answer when well-formed, else a deny that says so. Never throws. */
function checkedAnswer(answer: unknown): RecordedDecision {
  return (
    wellFormed(answer) ?? {
      decision: 'deny',
      ruleIds: [],
      reason: 'policy engine returned an invalid decision; nothing was run',
    }
  );
}

function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return (
    typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function'
  );
}

/** The decision if it has the documented shape, else null (treated as deny). */
function wellFormed(answer: unknown): RecordedDecision | null {
  if (typeof answer !== 'object' || answer === null) return null;
  const { decision, ruleIds, reason, subcommands, resolvedCwd, layer } = answer as Partial<PolicyDecision>;
  if (decision !== 'allow' && decision !== 'deny' && decision !== 'ask') return null;
  if (!Array.isArray(ruleIds) || !ruleIds.every((id) => typeof id === 'string')) return null;
  if (typeof reason !== 'string') return null;
  return {
    decision,
    ruleIds,
    reason,
    subcommands: Array.isArray(subcommands) ? subcommands : [],
    resolvedCwd: typeof resolvedCwd === 'string' && isAbsolute(resolvedCwd) ? resolvedCwd : null,
    ...((layer === 'managed' || layer === 'workspace') && { layer }),
  };
}
