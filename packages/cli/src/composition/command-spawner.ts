import type { ProcessSpawner } from '@termgate/termhost';
import {
  CgroupProcessSpawner,
  CrossSpawnProcessSpawner,
  createTerminalCgroupRoot,
  findOnPath,
  SetprivProcessSpawner,
} from '@termgate/termhost/adapters';
import type { Logger } from 'pino';
import type { SandboxRuntime } from '../serve/sandbox-runtime.js';

/**
 * How commands are started (PROCESS_SPAWNER). With the policy's sandbox on,
 * inside it (its pid namespace confines what they start). Without it, the
 * strongest confinement the platform gives a plain spawn (README, "What
 * holds without the sandbox"):
 * - in a cgroup v2 of their own when this process may create one (root, or
 *   a delegated cgroup), so that kill, release and shutdown reach what left
 *   the session, and a terminal reports processes left behind;
 * - as root, without CAP_SYS_PTRACE (through setpriv), which keeps them from
 *   reopening this process's stdin/stdout via `/proc/$PPID/fd`. A command of
 *   another uid cannot open them anyway; one of the same non-root uid can.
 */
export function commandSpawner(sandbox: SandboxRuntime | null, logger: Logger): ProcessSpawner {
  if (sandbox !== null) return sandbox.wrap(new CrossSpawnProcessSpawner());
  let spawner: ProcessSpawner = new CrossSpawnProcessSpawner();
  const cgroups = createTerminalCgroupRoot();
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
