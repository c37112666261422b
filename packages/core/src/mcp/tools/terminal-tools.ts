import {
  type CallerContext,
  type ExitStatus,
  TermhostError,
  type TerminalHost,
  type TerminalSpec,
} from '@termgate/termhost';
import type { SchemaValidator, Validate } from '../../ports/schema-validator.js';
import { describeTermhostError } from './termhost-error-messages.js';
import { TOOL_DEFINITIONS, type ToolName } from './tool-definitions.js';
import { type ToolOutcome, toolError } from './tool-result.js';

export interface ToolCallContext {
  readonly caller: CallerContext;
  /** Aborted when the client cancels the request. */
  readonly signal: AbortSignal;
  /** Present when the client asked for progress. */
  readonly onOutput?: (chunk: Uint8Array, totalBytes: number) => void;
}

export interface TerminalToolsOptions {
  /** How long terminal_wait_for_exit waits when the call names no timeout. Default 30 s. */
  readonly defaultWaitSeconds?: number;
}

type Args = Record<string, unknown>;

function exitFields(status: ExitStatus): Record<string, unknown> {
  return {
    exitCode: status.exitCode,
    signal: status.signal,
    timedOut: status.timedOut,
    ...(status.processesLeft === true && { processesLeft: true }),
  };
}

function formatViolations(tool: string, violations: readonly { path: string; message: string }[]): string {
  const parts = violations.map(
    (v) => `${v.path === '' ? 'arguments' : `"${v.path.slice(1).replaceAll('/', '.')}"`} ${v.message}`,
  );
  return `Invalid arguments for ${tool}: ${parts.join('; ')}.`;
}

/**
 * The five terminal tools over the TerminalHost port. Handlers return
 * outcomes and never throw for tool failures; an abort (client cancelled)
 * rejects, and the caller sends nothing for it.
 */
export class TerminalTools {
  /** Compiled on a tool's first call, then reused: compiling all five up front delayed the first answer. */
  private readonly validators = new Map<ToolName, Validate>();
  private readonly defaultWaitSeconds: number;

  constructor(
    private readonly host: TerminalHost,
    private readonly validator: SchemaValidator,
    options: TerminalToolsOptions = {},
  ) {
    this.defaultWaitSeconds = options.defaultWaitSeconds ?? 30;
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
    if (violations.length > 0) return toolError(formatViolations(name, violations));
    try {
      switch (name) {
        case 'terminal_create':
          return await this.create(args, context);
        case 'terminal_output':
          return await this.output(args, context);
        case 'terminal_wait_for_exit':
          return await this.wait(args, context);
        case 'terminal_kill':
          await this.host.kill(args.terminalId as string, context.caller);
          return { structuredContent: {} };
        case 'terminal_release':
          await this.host.release(args.terminalId as string, context.caller);
          return { structuredContent: {} };
      }
    } catch (error) {
      if (context.signal.aborted) throw error;
      if (TermhostError.is(error)) return toolError(describeTermhostError(error));
      throw error;
    }
  }

  private async create(args: Args, context: ToolCallContext): Promise<ToolOutcome> {
    const spec: { -readonly [K in keyof TerminalSpec]: TerminalSpec[K] } = {
      command: args.command as string,
    };
    if (args.args !== undefined) spec.args = args.args as string[];
    if (args.cwd !== undefined) spec.cwd = args.cwd as string;
    if (args.env !== undefined) spec.env = args.env as Record<string, string>;
    if (args.outputByteLimit !== undefined) spec.outputByteLimit = args.outputByteLimit as number;
    const terminalId = await this.host.create(spec, context.caller);
    return { structuredContent: { terminalId } };
  }

  private async output(args: Args, context: ToolCallContext): Promise<ToolOutcome> {
    const snapshot = await this.host.output(args.terminalId as string, context.caller);
    return {
      structuredContent: {
        output: snapshot.output,
        truncated: snapshot.truncated,
        totalBytes: snapshot.totalBytes,
        droppedBytes: snapshot.droppedBytes,
        exitStatus: snapshot.exitStatus === null ? null : exitFields(snapshot.exitStatus),
      },
    };
  }

  private async wait(args: Args, context: ToolCallContext): Promise<ToolOutcome> {
    const seconds = (args.timeoutSeconds as number | undefined) ?? this.defaultWaitSeconds;
    const timeout = AbortSignal.timeout(Math.ceil(seconds * 1000));
    const signal = AbortSignal.any([context.signal, timeout]);
    try {
      const status = await this.host.waitForExit(
        args.terminalId as string,
        context.onOutput ? { signal, onOutput: context.onOutput } : { signal },
        context.caller,
      );
      return { structuredContent: { running: false, ...exitFields(status) } };
    } catch (error) {
      if (context.signal.aborted || !timeout.aborted) throw error;
      return {
        structuredContent: { running: true, exitCode: null, signal: null, timedOut: false },
        notes: [
          `The command is still running after ${seconds} s; it was not stopped. Call terminal_wait_for_exit again to keep waiting, terminal_output to read its output so far, or terminal_kill to stop it.`,
        ],
      };
    }
  }
}
