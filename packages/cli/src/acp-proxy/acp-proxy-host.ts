import type { TerminalHost } from '@termgate/termhost';
import type { Logger } from 'pino';
import { createGatedTerminalHost } from '../serve/gated-terminal-host.js';
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
  const runtime = await startPolicyRuntime(config, notice);
  return { host: createGatedTerminalHost(config, runtime, logger), stop: runtime.stop };
}
