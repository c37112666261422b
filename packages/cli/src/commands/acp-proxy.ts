import { ACP_PROXY_USAGE, type AcpProxyConfig, parseAcpProxyArgs } from '../acp-proxy/acp-proxy-config.js';
import { type AcpProxyHost, buildAcpProxyHost } from '../acp-proxy/acp-proxy-host.js';
import { runAcpProxy } from '../acp-proxy/acp-proxy-runner.js';
import { closeInheritedDescriptors } from '../inherited-fds.js';
import { createStderrLogger } from '../logging.js';
import type { CliCommand } from './cli-io.js';

/**
 * `termgate acp-proxy [options] -- AGENT [ARG...]`: an ACP agent behind
 * termgate's terminals. Resolves with 0 when the editor went away, with the
 * agent's exit code when the agent did, 2 on a usage error and 1 when the
 * policy gate could not be started (it never falls back to allow-all).
 */
export const acpProxyCommand: CliCommand = async (argv, io) => {
  let config: AcpProxyConfig;
  try {
    config = parseAcpProxyArgs(argv, process.cwd());
  } catch (error) {
    io.stderr.write(`termgate acp-proxy: ${(error as Error).message}\n\n${ACP_PROXY_USAGE}`);
    return 2;
  }
  const logger = createStderrLogger(config.logLevel).child({ component: 'acp-proxy' });
  // Before the agent or any command is spawned: neither may inherit what our launcher left open.
  const closedFds = closeInheritedDescriptors();
  if (closedFds.length > 0) logger.debug({ fds: closedFds }, 'closed inherited descriptors');
  let built: AcpProxyHost;
  try {
    built = await buildAcpProxyHost(config, logger, (line) => io.stderr.write(`${line}\n`));
  } catch (error) {
    io.stderr.write(
      `termgate acp-proxy: refusing to start: ${(error as Error).message}\n` +
        'The policy gate could not be set up; no agent was started.\n',
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
    return await runAcpProxy({
      host: built.host,
      agentCommand: config.agentCommand,
      io,
      logger,
      cwd: config.cwd,
      stopSignal,
      ...(config.approvalTimeoutMs !== undefined && { approvalTimeoutMs: config.approvalTimeoutMs }),
    });
  } finally {
    process.off('SIGTERM', onSignal!);
    process.off('SIGINT', onSignal!);
    await built.host.closeAll();
    built.stop('acp-proxy stopped');
  }
};
