import { ProcessTerminalHost, type TerminalHost } from '@termgate/termhost';
import type { Logger } from 'pino';
import { startPolicyRuntime } from '../serve/policy-runtime.js';
import type { AcpProxyConfig } from './acp-proxy-config.js';

/** The terminal host the proxy serves the agent from, and how to end it. */
export interface AcpProxyHost {
  readonly host: TerminalHost;
  /** After every terminal ended: closes the audit trail (with its stop record). Idempotent. */
  readonly stop: (reason: string) => void;
}

/**
 * Builds the proxy's ProcessTerminalHost and its gate, exactly as `serve`
 * does: the same fail-closed start (the policy — the shipped default when no
 * `--policy` is given — parses, validates and passes its tests; `--shell` is
 * bash; the audit trail opens and takes its start record) and the same host
 * options (policy-filtered environment, limits, output digests). Any failure
 * throws: the proxy refuses to start rather than run commands unchecked.
 */
export async function buildAcpProxyHost(
  config: AcpProxyConfig,
  logger: Logger,
  notice: (line: string) => void,
): Promise<AcpProxyHost> {
  const runtime = await startPolicyRuntime(
    {
      policyPath: config.policyPath,
      auditPath: config.auditPath,
      auditFsync: config.auditFsync,
      shell: config.shell,
      logLevel: config.logLevel,
      cwd: config.cwd,
    },
    notice,
  );
  const limits = runtime.policy.limits;
  return {
    host: new ProcessTerminalHost({
      cwd: config.cwd,
      gate: runtime.gate,
      observer: runtime.gate,
      digestOutput: true,
      inheritEnv: runtime.policy.inheritedEnv(process.env),
      ...(limits.maxTerminals !== undefined && { maxTerminals: limits.maxTerminals }),
      ...(limits.maxOutputBytes !== undefined && { maxOutputBytes: limits.maxOutputBytes }),
      ...(limits.timeoutSeconds !== undefined && { timeoutMs: limits.timeoutSeconds * 1000 }),
      ...(config.shell !== null && { shellPrefix: [config.shell, '--noprofile', '--norc', '-c'] }),
      onError: (error, where) =>
        logger.child({ component: 'termhost' }).warn({ err: error, where }, 'termhost error'),
    }),
    stop: runtime.stop,
  };
}
