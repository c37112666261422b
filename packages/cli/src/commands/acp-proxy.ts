import { AcpProxy } from '@termgate/core';
import { TERMINAL_HOST, type TerminalHost } from '@termgate/termhost';
import {
  ACP_PROXY_USAGE,
  type AcpProxyConfig,
  agentCommandStart,
  parseAcpProxyArgs,
} from '../acp-proxy/acp-proxy-config.js';
import { runAcpProxy } from '../acp-proxy/acp-proxy-runner.js';
import { buildContainer } from '../composition/composition-root.js';
import {
  OPEN_STDIO_TRANSPORT,
  type OpenStdioTransport,
  POLICY_RUNTIME,
  SHUTDOWN_HOOKS,
  type ShutdownHook,
} from '../composition/tokens.js';
import type { CliCommand } from './cli-io.js';
import { startProcess } from './start-process.js';
import { printUsage, reportUsageError, UsageError, wantsHelp } from './usage.js';

/**
 * `termgate acp-proxy [options] -- AGENT [ARG...]`: an ACP agent behind
 * termgate's terminals. Resolves with 0 when the editor went away, with the
 * agent's exit code when the agent did, 2 on a usage error and 1 when the
 * policy gate could not be started (it never falls back to allow-all).
 */
export const acpProxyCommand: CliCommand = async (argv, io) => {
  if (wantsHelp(argv, agentCommandStart(argv))) return printUsage(io, ACP_PROXY_USAGE);
  let config: AcpProxyConfig;
  try {
    config = parseAcpProxyArgs(argv, process.cwd());
  } catch (error) {
    if (error instanceof UsageError) return reportUsageError(io, 'acp-proxy', error.message);
    throw error;
  }
  const { logger, notices } = await startProcess('acp-proxy', config, io);
  const container = buildContainer(config, logger, notices, { reclaimExited: false });
  // The same fail-closed start as serve's, finished before the agent starts.
  try {
    await container.getAsync(POLICY_RUNTIME);
  } catch (error) {
    notices.problem(
      `refusing to start: ${(error as Error).message}; the policy gate could not be set up, no agent was started`,
    );
    return 1;
  }
  const host = container.get<TerminalHost>(TERMINAL_HOST);
  let onSignal: ((signal: NodeJS.Signals) => void) | undefined;
  const stopSignal = new Promise<string>((resolve) => {
    onSignal = (signal) => resolve(signal);
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  });
  try {
    return await runAcpProxy({
      proxy: container.get(AcpProxy),
      openTransport: container.get<OpenStdioTransport>(OPEN_STDIO_TRANSPORT),
      agentCommand: config.agentCommand,
      io,
      logger: logger.child({ component: 'acp-proxy' }),
      notices,
      cwd: config.cwd,
      stopSignal,
    });
  } finally {
    process.off('SIGTERM', onSignal!);
    process.off('SIGINT', onSignal!);
    await host.closeAll();
    for (const hook of container.get<ShutdownHook[]>(SHUTDOWN_HOOKS)) await hook('acp-proxy stopped');
  }
};
