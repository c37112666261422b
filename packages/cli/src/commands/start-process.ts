import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
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
  const notices = createNotices(format, io.stderr, command, config.logLevel);
  if (startedInHome(config.cwd)) notices.warning(HOME_WORKSPACE_WARNING);
  return { logger, notices };
}

/**
 * Said when `serve` or `acp-proxy` starts in the home directory: the
 * shipped policy's workspace is `${SERVER_CWD}`, so it is then the whole home.
 */
export const HOME_WORKSPACE_WARNING =
  "started in the home directory: the workspace (SERVER_CWD in the policy) is your whole home, dotfiles included; commands may run and write anywhere below it that the policy allows. Start termgate in a project directory (or set the client's cwd for it).";

function startedInHome(cwd: string): boolean {
  const real = (path: string): string => {
    try {
      return realpathSync(path);
    } catch {
      return path;
    }
  };
  return real(cwd) === real(process.env.HOME || homedir());
}
