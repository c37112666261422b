import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Makes this server's `termgate-<pid>-<id>` directory in the cgroup
 * directory `own` (of any hierarchy, v1 or v2), after removing the ones
 * left by termgate processes that are gone (killed before they could clean
 * up). The new directory, and every child cgroup of it, is removed when this
 * process exits (rmdir: only once empty). Returns its path, or `null` when
 * it cannot be made here.
 */
export function makeServerCgroupRoot(own: string): string | null {
  try {
    for (const entry of readdirSync(own)) {
      const match = /^termgate-(\d+)(-|$)/.exec(entry);
      if (match === null || processExists(Number(match[1]))) continue;
      removeCgroupTree(join(own, entry));
    }
    const root = join(own, `termgate-${process.pid}-${randomUUID().slice(0, 8)}`);
    mkdirSync(root);
    process.once('exit', () => removeCgroupTree(root));
    return root;
  } catch {
    return null;
  }
}

/** rmdir of `dir`'s empty child cgroups, then of `dir`; populated ones stay. */
export function removeCgroupTree(dir: string): void {
  try {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) tryRmdir(join(dir, entry.name));
    }
  } catch {
    // gone
  }
  tryRmdir(dir);
}

/** rmdir of one cgroup; true once it is gone (false: still populated, or refused). */
export function tryRmdir(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
