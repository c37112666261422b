import { type ChildProcess, spawn } from 'node:child_process';
import { constants } from 'node:os';
import type { AcpProxy, Logger } from '@termgate/core';
import type { StdioTransport } from '@termgate/transport-stdio';
import type { CliIo } from '../commands/cli-io.js';
import type { OpenStdioTransport } from '../composition/tokens.js';
import type { Notices } from '../logging.js';

/** Between SIGTERM and SIGKILL when the proxy stops the agent. */
export const DEFAULT_AGENT_KILL_GRACE_MS = 3000;

export interface AcpProxyRunOptions {
  /** The proxy, serving terminal/* from the gated host. */
  readonly proxy: AcpProxy;
  /** Frames the editor's and the agent's streams. */
  readonly openTransport: OpenStdioTransport;
  /** Program and arguments of the agent. */
  readonly agentCommand: readonly string[];
  readonly io: CliIo;
  readonly logger: Logger;
  readonly notices: Notices;
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
 * - The agent runs in its own process group. The editor closes its side (end
 *   of `io.stdin`) or a stop signal comes: every terminal is killed and
 *   released, the agent's group gets SIGTERM (and its stdin is closed), then
 *   SIGKILL after the grace; whatever is left of the group is killed;
 *   resolves 0. A peer that stopped reading never holds the proxy up for
 *   more than the grace.
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
    // Its own process group, so that stopping it also stops what it started.
    child = spawn(program!, args, { cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  } catch (error) {
    options.notices.problem(`cannot start the agent ${program}: ${(error as Error).message}`);
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
    options.notices.problem(`cannot start the agent ${program}: ${spawned.message}`);
    return errno === 'ENOENT' ? 127 : 126;
  }
  child.on('error', (error) => logger.warn({ err: error }, 'agent process error'));
  child.stderr!.on('data', (chunk: Buffer) => io.stderr.write(chunk));
  logger.info({ pid: child.pid, command: options.agentCommand }, 'agent started');

  const editor = options.openTransport(io.stdin, io.stdout, {
    endOutputOnClose: io.stdout !== process.stdout,
  });
  const agent = options.openTransport(child.stdout!, child.stdin!);
  const connection = options.proxy.connect(editor, agent);

  type Ending = { readonly by: 'editor' } | { readonly by: 'agent'; readonly exit?: AgentExit };
  const ending = await Promise.race<Ending>([
    connection.closed.then((side) => (side === 'editor' ? { by: 'editor' } : { by: 'agent' })),
    exited.then((exit) => ({ by: 'agent', exit })),
    ...(options.stopSignal ? [options.stopSignal.then((): Ending => ({ by: 'editor' }))] : []),
  ]);
  logger.info({ by: ending.by }, 'stopping');

  const signalAgent = (signal: NodeJS.Signals): void => {
    const pid = child.pid;
    if (pid === undefined || pid <= 0) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // The group is gone.
    }
  };
  // Signals first: closing the agent's stdin waits for queued writes, which an
  // agent that stopped reading never takes, so it is not awaited.
  const stopAgent = async (): Promise<AgentExit> => {
    if (child.exitCode === null && child.signalCode === null) {
      signalAgent('SIGTERM');
      const timer = setTimeout(() => signalAgent('SIGKILL'), grace);
      void agent.close().catch(() => undefined);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
        child.stdin?.destroy();
      }
    }
    return exited;
  };
  /** Closes a transport, waiting for its queued writes at most `grace` (a peer may have stopped reading). */
  const closeWithin = (transport: StdioTransport): Promise<unknown> =>
    Promise.race([
      transport.close().catch(() => undefined),
      new Promise((resolve) => setTimeout(resolve, grace).unref()),
    ]);

  if (ending.by === 'editor') {
    await connection.shutdown();
    await stopAgent();
    signalAgent('SIGKILL'); // whatever the agent started and left behind
    await closeWithin(editor);
    return 0;
  }
  if (ending.exit !== undefined) {
    // 'exit' can come before the agent's last lines were read: let its stdout end first (within the grace).
    await Promise.race([connection.closed, new Promise((resolve) => setTimeout(resolve, grace).unref())]);
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
  signalAgent('SIGKILL'); // whatever the agent started and left behind
  await closeWithin(editor);
  await closeWithin(agent);
  // The editor may keep its end open; stop reading it so the process can exit.
  io.stdin.destroy();
  logger.info({ code: exit.code, signal: exit.signal }, 'agent exited');
  return exitCodeOf(exit);
}
