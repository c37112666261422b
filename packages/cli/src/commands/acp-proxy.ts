import { AcpProxyApplication } from '../acp-proxy/acp-proxy-application.js';
import {
  ACP_PROXY_USAGE,
  type AcpProxyConfig,
  agentCommandStart,
  parseAcpProxyArgs,
} from '../acp-proxy/acp-proxy-config.js';
import { buildContainer } from '../composition/composition-root.js';
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
  const app = buildContainer(config, logger, notices, { reclaimExited: false }).get(AcpProxyApplication);
  // The same fail-closed start as serve's, finished before the agent starts.
  try {
    await app.start();
  } catch (error) {
    notices.problem(
      `refusing to start: ${(error as Error).message}; the policy gate could not be set up, no agent was started`,
    );
    return 1;
  }
  let onSignal: ((signal: NodeJS.Signals) => void) | undefined;
  const stopSignal = new Promise<string>((resolve) => {
    onSignal = (signal) => resolve(signal);
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  });
  try {
    return await app.run({ agentCommand: config.agentCommand, io, cwd: config.cwd, stopSignal });
  } finally {
    process.off('SIGTERM', onSignal!);
    process.off('SIGINT', onSignal!);
  }
};
