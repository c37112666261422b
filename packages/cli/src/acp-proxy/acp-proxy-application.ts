import { AcpProxy } from '@termgate/core';
import { TERMINAL_HOST, type TerminalHost } from '@termgate/termhost';
import { inject, injectable } from 'inversify';
import type { Logger } from 'pino';
import type { CliIo } from '../commands/cli-io.js';
import type { PolicyRuntime } from '../composition/policy-runtime.js';
import type { PolicyStartup } from '../composition/policy-startup.js';
import {
  NOTICES,
  OPEN_STDIO_TRANSPORT,
  type OpenStdioTransport,
  POLICY_STARTUP,
  ROOT_LOGGER,
  SHUTDOWN_HOOKS,
  type ShutdownHook,
} from '../composition/tokens.js';
import type { Notices } from '../logging.js';
import { runAcpProxy } from './acp-proxy-runner.js';

/**
 * One `acp-proxy` run: `start` starts the policy side (fail closed: it
 * rejects when the gate cannot start, and no agent may start then); `run`
 * runs the agent behind the proxy (`runAcpProxy`) and, however it ends,
 * ends every terminal and runs the shutdown hooks (the audit trail's stop
 * record).
 */
@injectable()
export class AcpProxyApplication {
  constructor(
    @inject(AcpProxy) private readonly proxy: AcpProxy,
    @inject(TERMINAL_HOST) private readonly host: TerminalHost,
    @inject(OPEN_STDIO_TRANSPORT) private readonly openTransport: OpenStdioTransport,
    @inject(POLICY_STARTUP) private readonly policy: PolicyStartup,
    @inject(SHUTDOWN_HOOKS) private readonly shutdownHooks: readonly ShutdownHook[],
    @inject(ROOT_LOGGER) private readonly logger: Logger,
    @inject(NOTICES) private readonly notices: Notices,
  ) {}

  start(): Promise<PolicyRuntime> {
    return this.policy.runtime();
  }

  async run(options: {
    readonly agentCommand: readonly string[];
    readonly io: CliIo;
    readonly cwd: string;
    readonly stopSignal: Promise<string>;
  }): Promise<number> {
    try {
      return await runAcpProxy({
        proxy: this.proxy,
        openTransport: this.openTransport,
        agentCommand: options.agentCommand,
        io: options.io,
        logger: this.logger.child({ component: 'acp-proxy' }),
        notices: this.notices,
        cwd: options.cwd,
        stopSignal: options.stopSignal,
      });
    } finally {
      await this.host.closeAll();
      for (const hook of this.shutdownHooks) await hook('acp-proxy stopped');
    }
  }
}
