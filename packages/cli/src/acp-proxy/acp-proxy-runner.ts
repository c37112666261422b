import { type ChildProcess, spawn } from 'node:child_process';
import { constants } from 'node:os';
import { AcpProxy, AjvSchemaValidator, type Logger } from '@termgate/core';
import type { TerminalHost } from '@termgate/termhost';
import { StdioTransport } from '@termgate/transport-stdio';
import type { CliIo } from '../commands/cli-io.js';

/** Between SIGTERM and SIGKILL when the proxy stops the agent. */
export const DEFAULT_AGENT_KILL_GRACE_MS = 3000;

export interface AcpProxyRunOptions {
  readonly host: TerminalHost;
  /** Program and arguments of the agent. */
  readonly agentCommand: readonly string[];
  readonly io: CliIo;
  readonly logger: Logger;
  readonly cwd: string;
  readonly agentKillGraceMs?: number;
  /** Resolves when the proxy should stop as if the editor had gone (SIGTERM, SIGINT). */
  readonly stopSignal?: Promise<string>;
}

interface AgentExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

function exitCodeOf(exit: AgentExit): number {
  if (exit.code !== null) return exit.code;
  const number = exit.signal === null ? undefined : constants.signals[exit.signal];
  return number === undefined ? 1 : 128 + number;
}

/**
 * Runs one agent behind the proxy until either side is gone.
 *
 * - The agent is spawned with piped stdin/stdout (ACP) and piped stderr,
 *   which is copied to `io.stderr` as it arrives.
 * - The editor closes its side (end of `io.stdin`) or a stop signal comes:
 *   every terminal is killed and released, the agent's stdin is closed and
 *   it gets SIGTERM, then SIGKILL after the grace; resolves 0.
 * - The agent exits or closes its stdout: every terminal is killed and
 *   released, the editor's stdout is flushed; resolves with the agent's exit
 *   code (128 + n for a signal n). An agent that closed stdout but lingers is
 *   stopped as above.
 * - The agent cannot be started: resolves 127 (not found) or 126, with the
 *   reason on stderr.
 */
export async function runAcpProxy(options: AcpProxyRunOptions): Promise<number> {
  const { io, logger } = options;
  const [program, ...args] = options.agentCommand;
  const grace = options.agentKillGraceMs ?? DEFAULT_AGENT_KILL_GRACE_MS;
  let child: ChildProcess;
  try {
    child = spawn(program!, args, { cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
  } catch (error) {
    io.stderr.write(`termgate acp-proxy: cannot start the agent ${program}: ${(error as Error).message}\n`);
    return 126;
  }
  const exited = new Promise<AgentExit>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const spawned = await new Promise<Error | null>((resolve) => {
    child.once('spawn', () => resolve(null));
    child.once('error', (error) => resolve(error));
  });
  if (spawned !== null) {
    const errno = (spawned as NodeJS.ErrnoException).code;
    io.stderr.write(`termgate acp-proxy: cannot start the agent ${program}: ${spawned.message}\n`);
    return errno === 'ENOENT' ? 127 : 126;
  }
  child.on('error', (error) => logger.warn({ err: error }, 'agent process error'));
  child.stderr!.on('data', (chunk: Buffer) => io.stderr.write(chunk));
  logger.info({ pid: child.pid, command: options.agentCommand }, 'agent started');

  const editor = new StdioTransport(io.stdin, io.stdout, { endOutputOnClose: io.stdout !== process.stdout });
  const agent = new StdioTransport(child.stdout!, child.stdin!);
  const connection = new AcpProxy(options.host, new AjvSchemaValidator(), {
    logger: logger,
  }).connect(editor, agent);

  type Ending = { readonly by: 'editor' } | { readonly by: 'agent'; readonly exit?: AgentExit };
  const ending = await Promise.race<Ending>([
    connection.closed.then((side) => (side === 'editor' ? { by: 'editor' } : { by: 'agent' })),
    exited.then((exit) => ({ by: 'agent', exit })),
    ...(options.stopSignal ? [options.stopSignal.then((): Ending => ({ by: 'editor' }))] : []),
  ]);
  logger.info({ by: ending.by }, 'stopping');

  const stopAgent = async (): Promise<AgentExit> => {
    if (child.exitCode === null && child.signalCode === null) {
      await agent.close().catch(() => undefined);
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), grace);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    }
    return exited;
  };

  if (ending.by === 'editor') {
    await connection.shutdown();
    await stopAgent();
    await editor.close();
    return 0;
  }
  // The agent ended (or closed its stdout): give it the grace to exit by itself.
  const exit =
    ending.exit ??
    (await Promise.race([
      exited,
      new Promise<null>((resolve) => setTimeout(() => resolve(null), grace).unref()),
    ])) ??
    (await stopAgent());
  await connection.shutdown();
  await editor.close();
  await agent.close().catch(() => undefined);
  // The editor may keep its end open; stop reading it so the process can exit.
  io.stdin.destroy();
  logger.info({ code: exit.code, signal: exit.signal }, 'agent exited');
  return exitCodeOf(exit);
}
