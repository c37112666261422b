import { type ProcessSpawner, ProcessTerminalHost } from '@termgate/termhost';
import {
  CgroupProcessSpawner,
  CrossSpawnProcessSpawner,
  createTerminalCgroupRoot,
  findOnPath,
  SetprivProcessSpawner,
} from '@termgate/termhost/adapters';
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
    spawner:
      runtime.sandbox !== null
        ? runtime.sandbox.wrap(new CrossSpawnProcessSpawner())
        : commandSpawner(logger),
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

/**
 * How commands are started without the sandbox (README, "What holds without
 * the sandbox"):
 * - in a cgroup v2 of their own when this process may create one (root, or
 *   a delegated cgroup), so that kill, release and shutdown reach what left
 *   the session, and a terminal reports processes left behind;
 * - as root, without CAP_SYS_PTRACE (through setpriv), which keeps them from
 *   reopening this process's stdin/stdout via `/proc/$PPID/fd`. A command of
 *   another uid cannot open them anyway; one of the same non-root uid can.
 */
/**
 * Without the sandbox: the strongest confinement the platform gives a plain
 * spawn (a cgroup per terminal, no CAP_SYS_PTRACE for root's commands).
 * With it, the sandbox's pid namespace does both, and this is not used.
 */
function commandSpawner(logger: Logger): ProcessSpawner {
  let spawner: ProcessSpawner = new CrossSpawnProcessSpawner();
  const cgroups = cgroupRoot();
  if (cgroups !== null) spawner = new CgroupProcessSpawner(spawner, cgroups);
  else logger.info('no writable cgroup v2: processes that leave their session outlive their terminal');
  if (process.getuid?.() !== 0) return spawner;
  const setpriv = findOnPath('setpriv', '/usr/bin:/bin:/usr/sbin:/sbin');
  if (setpriv === null) {
    logger.warn(
      'running as root without setpriv (util-linux): commands keep CAP_SYS_PTRACE and can reach the protocol stream through /proc',
    );
    return spawner;
  }
  return new SetprivProcessSpawner(spawner, setpriv);
}

let cgroupRootMemo: string | null | undefined;
/** One cgroup directory per process, shared by every host it builds. */
function cgroupRoot(): string | null {
  if (cgroupRootMemo === undefined) cgroupRootMemo = createTerminalCgroupRoot();
  return cgroupRootMemo;
}
