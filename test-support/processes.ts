import { readFileSync } from 'node:fs';

/**
 * Test support shared by every package's tests (imported by relative path;
 * jest transpiles it like the tests). One answer to "is this pid alive".
 */

/**
 * True while `pid` is a live process: it exists and is not a zombie. A zombie
 * has exited; under an init that does not reap (some containers and VMs) an
 * orphaned one would otherwise look alive forever, as `process.kill(pid, 0)`
 * succeeds for it. On Linux the state comes from `/proc/<pid>/stat`, which any
 * user may read, so another user's process counts too; elsewhere signal 0
 * decides (EPERM: it exists).
 */
export function isAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  if (process.platform === 'linux') {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    } catch {
      return false;
    }
    // "pid (comm) state …": comm may itself contain spaces and parentheses.
    const state = stat.charAt(stat.lastIndexOf(')') + 2);
    return state !== 'Z' && state !== 'X' && state !== '';
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
