import { CrossSpawnProcessSpawner, ProcessTerminalHost } from '@termgate/termhost';
import type { Logger } from 'pino';
import type { PolicyRuntime } from './policy-runtime.js';
import type { ServeConfig } from './serve-config.js';

/**
 * The one way termgate builds its terminal host, for `serve` and
 * `acp-proxy` alike: the policy gate decides every verb and, as the
 * observer, records spawns and exits (with output digests); the policy's
 * limits and inherited environment apply; command lines run in bash (or the
 * checked `--shell`) without startup files; with the policy's sandbox on,
 * every command runs inside it. `reclaimExited` is for `serve`: MCP clients
 * may leave exited terminals unreleased, ACP agents release theirs.
 */
export function createGatedTerminalHost(
  config: Pick<ServeConfig, 'cwd' | 'shell'>,
  runtime: PolicyRuntime,
  logger: Logger,
  options: { readonly reclaimExited?: boolean } = {},
): ProcessTerminalHost {
  const limits = runtime.policy.limits;
  return new ProcessTerminalHost({
    cwd: config.cwd,
    gate: runtime.gate,
    observer: runtime.gate,
    digestOutput: true,
    ...(runtime.sandbox !== null && { spawner: runtime.sandbox.wrap(new CrossSpawnProcessSpawner()) }),
    reclaimExited: options.reclaimExited ?? false,
    inheritEnv: runtime.policy.inheritedEnv(process.env),
    ...(limits.maxTerminals !== undefined && { maxTerminals: limits.maxTerminals }),
    ...(limits.maxOutputBytes !== undefined && { maxOutputBytes: limits.maxOutputBytes }),
    ...(limits.timeoutSeconds !== undefined && { timeoutMs: limits.timeoutSeconds * 1000 }),
    ...(config.shell !== null && { shellPrefix: [config.shell, '--noprofile', '--norc', '-c'] }),
    onError: (error, where) =>
      logger.child({ component: 'termhost' }).warn({ err: error, where }, 'termhost error'),
  });
}
