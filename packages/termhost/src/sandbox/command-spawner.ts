import { CrossSpawnProcessSpawner } from '../adapters/cross-spawn-process-spawner.js';
import type { ProcessSpawner } from '../ports/process-spawner.js';
import { CgroupProcessSpawner, createTerminalCgroupRoot } from './cgroup-process-spawner.js';
import { findOnPath } from './executable-check.js';
import { SetprivProcessSpawner } from './setpriv-process-spawner.js';
import type { Sandbox } from './start-sandbox.js';

/** Where `commandSpawner` says what it could not set up (the operator's log). */
export interface SpawnerLog {
  info(message: string): void;
  warn(message: string): void;
}

/**
 * How commands are started (the `ProcessSpawner` a host is given). With a
 * started sandbox, inside it (its pid namespace confines what they start).
 * Without it, the strongest confinement the platform gives a plain spawn
 * (docs/PROTOCOL.md, "What holds without the sandbox"):
 * - in a cgroup v2 of their own when this process may create one (root, or
 *   a delegated cgroup), so that kill, release and shutdown reach what left
 *   the session, and a terminal reports processes left behind;
 * - as root, without CAP_SYS_PTRACE (the launcher, or setpriv without a cgroup), which keeps them from
 *   reopening this process's stdin/stdout via `/proc/$PPID/fd`. A command of
 *   another uid cannot open them anyway; one of the same non-root uid can.
 */
export function commandSpawner(sandbox: Sandbox<unknown> | null, log: SpawnerLog): ProcessSpawner {
  if (sandbox !== null) return sandbox.spawner(new CrossSpawnProcessSpawner());
  const system = '/usr/bin:/bin:/usr/sbin:/sbin';
  const root = process.getuid?.() === 0;
  const cgroups = createTerminalCgroupRoot();
  const perl = cgroups === null ? null : findOnPath('perl', system);
  // The command joins its cgroup itself (and, as root, drops CAP_SYS_PTRACE) in the launcher: this process never moves.
  if (cgroups !== null && perl !== null) {
    return new CgroupProcessSpawner(new CrossSpawnProcessSpawner(), cgroups, { perl, dropPtrace: root });
  }
  log.info('no writable cgroup v2 (or no perl): processes that leave their session outlive their terminal');
  const spawner = new CrossSpawnProcessSpawner();
  if (!root) return spawner;
  const setpriv = findOnPath('setpriv', system);
  if (setpriv === null) {
    log.warn(
      'running as root without setpriv (util-linux): commands keep CAP_SYS_PTRACE and can reach the protocol stream through /proc',
    );
    return spawner;
  }
  return new SetprivProcessSpawner(spawner, setpriv);
}
