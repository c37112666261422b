import type { Logger } from 'pino';
import { closeInheritedDescriptors } from '../inherited-fds.js';
import { createNotices, createStderrLogger, type Notices, resolveLogFormat } from '../logging.js';
import type { ServeConfig } from '../serve/serve-config.js';
import type { CliIo } from './cli-io.js';

/**
 * What `serve` and `acp-proxy` do first, alike: the logger and the
 * operator's notices in the chosen format, then close the descriptors this
 * process inherited, before anything (a command, the agent) is spawned.
 */
export async function startProcess(
  command: 'serve' | 'acp-proxy',
  config: ServeConfig,
  io: CliIo,
): Promise<{ readonly logger: Logger; readonly notices: Notices }> {
  const format = resolveLogFormat(config.logFormat, io.stderr);
  const logger = await createStderrLogger(config.logLevel, format);
  const closedFds = closeInheritedDescriptors();
  if (closedFds.length > 0) logger.debug({ fds: closedFds }, 'closed inherited descriptors');
  return { logger, notices: createNotices(format, io.stderr, command) };
}
