import {
  type CallerContext,
  type ExitStatus,
  TermhostError,
  type TerminalHost,
  type TerminalOutput,
  type TerminalSpec,
} from '@termgate/termhost';
import type { SchemaValidator, Validate } from '../../ports/schema-validator.js';
import {
  callBudget,
  DEFAULT_OUTPUT_BUDGET,
  type FittedOutput,
  fitOutput,
  fitOutputFromStart,
  type OutputBudgetLimits,
} from './output-budget.js';
import { ReadCursors } from './read-cursors.js';
import { describeTermhostError } from './termhost-error-messages.js';
import { DEFAULT_CREATE_WAIT_SECONDS, TOOL_DEFINITIONS, type ToolName } from './tool-definitions.js';
import { type ToolOutcome, toolError } from './tool-result.js';

export type OutputListener = (chunk: Uint8Array, totalBytes: number) => void;

export interface ToolCallContext {
  readonly caller: CallerContext;
  /** Aborted when the client cancels the request. */
  readonly signal: AbortSignal;
  /**
   * Present when the client asked for progress: opens the stream of output
   * updates for this call, each message at most `maxMessageChars` long.
   */
  readonly progress?: (maxMessageChars: number) => OutputListener;
}

export interface TerminalToolsOptions {
  /** How long terminal_wait_for_exit waits when the call names no timeout. Default 30 s. */
  readonly defaultWaitSeconds?: number;
  /** How long terminal_create waits when the call names no `waitSeconds`. Default {@link DEFAULT_CREATE_WAIT_SECONDS}. */
  readonly defaultCreateWaitSeconds?: number;
  /**
   * Character budgets of tool output (default {@link DEFAULT_OUTPUT_BUDGET}).
   * A promise when they come from a policy that is still loading; a rejected
   * one means the defaults (the host then refuses every verb anyway).
   */
  readonly outputBudget?: OutputBudgetLimits | Promise<OutputBudgetLimits>;
}

type Args = Record<string, unknown>;

/** Longest command text quoted back in a note. */
const QUOTED_COMMAND_CHARS = 200;

function exitFields(status: ExitStatus | null): Record<string, unknown> {
  return {
    exitCode: status?.exitCode ?? null,
    signal: status?.signal ?? null,
    timedOut: status?.timedOut ?? false,
    ...(status?.processesLeft === true && { processesLeft: true }),
  };
}

function formatViolations(tool: string, violations: readonly { path: string; message: string }[]): string {
  const parts = violations.map(
    (v) => `${v.path === '' ? 'arguments' : `"${v.path.slice(1).replaceAll('/', '.')}"`} ${v.message}`,
  );
  return `Invalid arguments for ${tool}: ${parts.join('; ')}.`;
}

function quoted(command: string): string {
  return JSON.stringify(
    command.length > QUOTED_COMMAND_CHARS ? `${command.slice(0, QUOTED_COMMAND_CHARS)}…` : command,
  );
}

/**
 * The five terminal tools over the TerminalHost port. Handlers return
 * outcomes and never throw for tool failures; an abort (client cancelled)
 * rejects, and the caller sends nothing for it.
 *
 * Contract beyond the tool descriptions:
 * - Every result's JSON text (and its notes) stays within the call's
 *   character budget; output that does not fit keeps its beginning and its
 *   end around a marker naming the omitted bytes.
 * - Each terminal has a read cursor: the end of the output the last result
 *   about it showed (create, wait or output). terminal_wait_for_exit returns
 *   the output after it.
 * - A terminal_create cancelled after its command started leaves it running;
 *   the next result of any tool names its terminalId, once.
 */
export class TerminalTools {
  /** Compiled on a tool's first call, then reused: compiling all five up front delayed the first answer. */
  private readonly validators = new Map<ToolName, Validate>();
  private readonly defaultWaitSeconds: number;
  private readonly defaultCreateWaitSeconds: number;
  private readonly budget: Promise<OutputBudgetLimits>;
  private readonly cursors = new ReadCursors();
  /** Terminals whose creating call was cancelled and whose id no result has named yet. */
  private readonly orphans = new Map<string, string>();

  constructor(
    private readonly host: TerminalHost,
    private readonly validator: SchemaValidator,
    options: TerminalToolsOptions = {},
  ) {
    this.defaultWaitSeconds = options.defaultWaitSeconds ?? 30;
    this.defaultCreateWaitSeconds = options.defaultCreateWaitSeconds ?? DEFAULT_CREATE_WAIT_SECONDS;
    this.budget = Promise.resolve(options.outputBudget ?? DEFAULT_OUTPUT_BUDGET).catch(
      () => DEFAULT_OUTPUT_BUDGET,
    );
  }

  has(name: string): name is ToolName {
    return TOOL_DEFINITIONS.some((tool) => tool.name === name);
  }

  private validatorFor(name: ToolName): Validate {
    let validate = this.validators.get(name);
    if (validate === undefined) {
      validate = this.validator.compile(TOOL_DEFINITIONS.find((tool) => tool.name === name)!.inputSchema);
      this.validators.set(name, validate);
    }
    return validate;
  }

  async call(name: ToolName, args: Args, context: ToolCallContext): Promise<ToolOutcome> {
    const violations = this.validatorFor(name)(args);
    if (violations.length > 0) return this.withOrphans(toolError(formatViolations(name, violations)));
    const limits = await this.budget;
    const requested = args.maxOutputChars as number | undefined;
    if (requested !== undefined && requested > limits.maxChars) {
      return this.withOrphans(
        toolError(
          `Invalid arguments for ${name}: "maxOutputChars" must be at most ${limits.maxChars} (the policy's ceiling).`,
        ),
      );
    }
    const budget = callBudget(requested, limits);
    const terminalId = args.terminalId as string | undefined;
    if (terminalId !== undefined) this.orphans.delete(terminalId);
    try {
      switch (name) {
        case 'terminal_create':
          return this.withOrphans(await this.create(args, budget, context));
        case 'terminal_output':
          return this.withOrphans(await this.output(terminalId!, args, budget, context));
        case 'terminal_wait_for_exit':
          return this.withOrphans(await this.wait(terminalId!, args, budget, context));
        case 'terminal_kill':
          await this.host.kill(terminalId!, context.caller);
          return this.withOrphans({ structuredContent: {} });
        case 'terminal_release':
          await this.host.release(terminalId!, context.caller);
          this.cursors.forget(terminalId!);
          return this.withOrphans({ structuredContent: {} });
      }
    } catch (error) {
      if (context.signal.aborted) throw error;
      if (TermhostError.is(error)) {
        // A question deferred to the client: this result is replaced by `input_required`, so the
        // notes about cancelled creates wait for the next result.
        if (error.code === 'GATE_DENIED' && error.details.approval === 'pending') {
          return toolError(describeTermhostError(error));
        }
        if (error.code === 'TERMINAL_NOT_FOUND' && terminalId !== undefined) this.cursors.forget(terminalId);
        return this.withOrphans(toolError(describeTermhostError(error)));
      }
      throw error;
    }
  }

  private async create(args: Args, budget: number, context: ToolCallContext): Promise<ToolOutcome> {
    const spec: { -readonly [K in keyof TerminalSpec]: TerminalSpec[K] } = {
      command: args.command as string,
    };
    if (args.args !== undefined) spec.args = args.args as string[];
    if (args.cwd !== undefined) spec.cwd = args.cwd as string;
    if (args.env !== undefined) spec.env = args.env as Record<string, string>;
    if (args.outputByteLimit !== undefined) spec.outputByteLimit = args.outputByteLimit as number;
    const terminalId = await this.host.create(spec, context.caller);
    const seconds = (args.waitSeconds as number | undefined) ?? this.defaultCreateWaitSeconds;
    try {
      const outcome = await this.started(terminalId, seconds, budget, context);
      // Cancelled at any point after the spawn: no result will be sent, so the next one names the handle.
      if (context.signal.aborted) throw context.signal.reason;
      return outcome;
    } catch (error) {
      if (context.signal.aborted) {
        this.orphans.set(terminalId, spec.command);
        throw error;
      }
      if (!TermhostError.is(error)) throw error;
      // The command runs: whatever failed after the spawn, the model needs its handle.
      return toolError(
        `The command started as terminalId "${terminalId}", but reading it failed: ${describeTermhostError(error)}`,
      );
    }
  }

  /** The rest of a create once the command runs: the wait, then the output so far. */
  private async started(
    terminalId: string,
    seconds: number,
    budget: number,
    context: ToolCallContext,
  ): Promise<ToolOutcome> {
    const status = seconds > 0 ? await this.waitFor(terminalId, seconds, budget, context) : null;
    const snapshot = await this.host.output(terminalId, context.caller);
    const exit = status ?? snapshot.exitStatus;
    const notes =
      exit === null
        ? [
            seconds > 0
              ? `Still running after ${seconds} s; it keeps running. Call terminal_wait_for_exit with this terminalId for the output that follows and the exit status, or terminal_kill to stop it.`
              : 'Started; it keeps running. Call terminal_wait_for_exit with this terminalId for its output and exit status, or terminal_kill to stop it.',
          ]
        : [];
    return this.withOutput({ terminalId }, snapshot, exit, notes, budget, terminalId);
  }

  private async output(
    terminalId: string,
    args: Args,
    budget: number,
    context: ToolCallContext,
  ): Promise<ToolOutcome> {
    const fromByte = args.fromByte as number | undefined;
    const snapshot = await this.host.output(
      terminalId,
      context.caller,
      fromByte === undefined ? {} : { fromByte },
    );
    const base = {
      truncated: snapshot.truncated,
      totalBytes: snapshot.totalBytes,
      droppedBytes: snapshot.droppedBytes,
      exitStatus: snapshot.exitStatus === null ? null : exitFields(snapshot.exitStatus),
    };
    const notes =
      fromByte !== undefined && fromByte < snapshot.offset && snapshot.offset === snapshot.droppedBytes
        ? [
            `Bytes before ${snapshot.offset} were dropped by the output limit; this output starts at byte ${snapshot.offset}.`,
          ]
        : [];
    const room = budget - this.overhead({ output: '', ...base }, notes);
    const fitted =
      fromByte === undefined
        ? fitOutput(snapshot.output, room, { startByte: snapshot.offset })
        : fitOutputFromStart(snapshot.output, room, { startByte: snapshot.offset });
    this.cursors.advance(terminalId, snapshot.totalBytes);
    return { structuredContent: { output: fitted.text, ...base }, ...(notes.length > 0 && { notes }) };
  }

  private async wait(
    terminalId: string,
    args: Args,
    budget: number,
    context: ToolCallContext,
  ): Promise<ToolOutcome> {
    const seconds = (args.timeoutSeconds as number | undefined) ?? this.defaultWaitSeconds;
    const status = await this.waitFor(terminalId, seconds, budget, context);
    const snapshot = await this.host.output(terminalId, context.caller, {
      fromByte: this.cursors.get(terminalId),
    });
    const notes =
      status === null
        ? [
            `Still running after ${seconds} s; it was not stopped. Call terminal_wait_for_exit again for the output that follows, or terminal_kill to stop it.`,
          ]
        : [];
    return this.withOutput({}, snapshot, status, notes, budget, terminalId);
  }

  /**
   * Waits at most `seconds`; `null` when the command still runs then. Rejects when the client
   * cancelled, and with the host's error when the host refused or failed the wait.
   */
  private async waitFor(
    terminalId: string,
    seconds: number,
    budget: number,
    context: ToolCallContext,
  ): Promise<ExitStatus | null> {
    // A timer cleared when the wait ends: AbortSignal.timeout would keep one alive per call for the whole wait.
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), Math.ceil(seconds * 1000));
    const signal = AbortSignal.any([context.signal, timeout.signal]);
    const onOutput = context.progress?.(budget);
    try {
      return await this.host.waitForExit(
        terminalId,
        onOutput ? { signal, onOutput } : { signal },
        context.caller,
      );
    } catch (error) {
      // Only the timer's abort means "still running". A host error (an unknown id, a refusal
      // by a gate slower than the timeout, a host that could not start) is the answer, even
      // when the timer ran out while the host was deciding.
      if (context.signal.aborted || !timeout.signal.aborted || TermhostError.is(error)) throw error;
      return null;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * A create or wait result: `fields`, the exit status, and the output read
   * since the cursor (the snapshot's), fitted into what the budget leaves.
   */
  private withOutput(
    fields: Record<string, unknown>,
    snapshot: TerminalOutput,
    status: ExitStatus | null,
    notes: string[],
    budget: number,
    terminalId: string,
  ): ToolOutcome {
    const cursor = this.cursors.get(terminalId);
    if (cursor < snapshot.offset && snapshot.offset === snapshot.droppedBytes) {
      notes.unshift(
        `${snapshot.offset - cursor} bytes written since the last read were dropped by the output limit before they could be read.`,
      );
    }
    const head = { ...fields, running: status === null, ...exitFields(status) };
    const room = budget - this.overhead({ ...head, output: '', totalBytes: snapshot.totalBytes }, notes);
    const fitted: FittedOutput = fitOutput(snapshot.output, room, { startByte: snapshot.offset });
    this.cursors.advance(terminalId, snapshot.totalBytes);
    return {
      structuredContent: { ...head, output: fitted.text, totalBytes: snapshot.totalBytes },
      ...(notes.length > 0 && { notes }),
    };
  }

  /** What a result costs besides its output text: its JSON, its notes, and room for a note about orphans. */
  private overhead(structured: Record<string, unknown>, notes: readonly string[]): number {
    let cost = JSON.stringify(structured).length;
    for (const note of notes) cost += note.length;
    for (const [id, command] of this.orphans) cost += this.orphanNote(id, command).length;
    return cost;
  }

  private orphanNote(terminalId: string, command: string): string {
    return `A terminal_create was cancelled after its command started: terminalId "${terminalId}" (${quoted(command)}). It was not stopped: call terminal_wait_for_exit for its output and exit status, or terminal_kill to stop it.`;
  }

  /** Appends a note for each terminal whose creating call was cancelled, once. */
  private withOrphans(outcome: ToolOutcome): ToolOutcome {
    if (this.orphans.size === 0) return outcome;
    const notes = [...(outcome.notes ?? [])];
    for (const [id, command] of this.orphans) notes.push(this.orphanNote(id, command));
    this.orphans.clear();
    return { ...outcome, notes };
  }
}
