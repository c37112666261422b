import { type AcpProxyOptions, type McpServerOptions, outputBudgetFor } from '@termgate/core';
import type { Logger } from 'pino';
import type { ServeConfig } from '../serve/serve-config.js';
import { TERMGATE_VERSION } from '../version.js';
import type { PolicyStartup } from './policy-startup.js';

/**
 * `serve`'s `McpServer` options (MCP_SERVER_OPTIONS). The output budget and
 * the sandbox facts come from the policy, which loads after the protocol
 * answers: both are promises of the policy side's start, not waited for here.
 */
export function mcpServerOptions(
  config: ServeConfig,
  logger: Logger,
  policy: PolicyStartup,
): McpServerOptions {
  return {
    serverInfo: { name: 'termgate', version: TERMGATE_VERSION },
    outputBudget: policy.runtime().then((runtime) => outputBudgetFor(runtime.policy.limits.maxOutputChars)),
    // The instructions and terminal_create's description say what the sandbox means, when it is on.
    sandbox: () =>
      policy.runtime().then(({ policy: { sandbox }, sandbox: started }) =>
        sandbox.mode === 'required'
          ? {
              tier: started?.layers.tier?.startsWith('landlock') ? 'landlock' : 'namespaces',
              protectGit: sandbox.protectGit,
              privateTmp: sandbox.privateTmp,
              network: typeof sandbox.network === 'string' ? sandbox.network : 'allowlist',
            }
          : null,
      ),
    logger: logger.child({ component: 'mcp' }),
    ...(config.approvalTimeoutMs !== undefined && { approvalTimeoutMs: config.approvalTimeoutMs }),
    ...(config.approvalStateTtlMs !== undefined && { requestState: { ttlMs: config.approvalStateTtlMs } }),
  };
}

/** `acp-proxy`'s `AcpProxy` options (ACP_PROXY_OPTIONS). */
export function acpProxyOptions(config: ServeConfig, logger: Logger): AcpProxyOptions {
  return {
    logger: logger.child({ component: 'acp-proxy' }),
    ...(config.approvalTimeoutMs !== undefined && { approvalTimeoutMs: config.approvalTimeoutMs }),
  };
}
