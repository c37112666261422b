/**
 * What one terminal of a sandbox may use. Enforced by a cgroup per terminal
 * where one can be made (`TerminalCgroups`: the tree's total memory,
 * shared memory included, and its processes), and always by rlimits:
 *
 * - `processes`: the cgroup's `pids.max`; without one, RLIMIT_NPROC, soft
 *   and hard (util-linux `prlimit`, run inside the sandbox as the last step
 *   before the command). The kernel counts RLIMIT_NPROC per user namespace
 *   and checks it against every ancestor namespace's copy of the limit taken
 *   when the child namespace was made (kernel/ucount.c), so it must be set
 *   inside the terminal's own user namespace, after bwrap made it: set
 *   before, it would bound all terminals together.
 * - `memoryMiB`: the cgroup's memory limit for the whole tree, and
 *   RLIMIT_DATA (heap and private writable mappings) per process, set by
 *   the launcher (inherited; a per-process limit means the same wherever it
 *   is set), so that a too-large allocation fails cleanly (`MemoryError`)
 *   before the cgroup has to OOM-kill.
 * - `tmpMiB`: the size of the terminal's private `/tmp` tmpfs.
 * - `totalMemoryMiB`: the memory limit of the cgroup that holds every
 *   terminal's cgroup (the server's `termgate-…` directory): the sum over
 *   all terminals, which also counts pages still charged to the removed
 *   cgroup of a terminal that ended (a memfd it passed to another terminal
 *   over a socket, say). Cgroup only; absent means no such bound.
 *
 * A command cannot raise them (it has no CAP_SYS_RESOURCE); hitting one
 * fails that command's fork, allocation or write, nothing else.
 */
export interface SandboxLimits {
  readonly processes: number;
  readonly memoryMiB: number;
  readonly tmpMiB: number;
  readonly totalMemoryMiB?: number;
}

/** Defaults a developer's work fits in: a parallel build, a dev server, a test run. */
export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = Object.freeze({
  processes: 1024,
  memoryMiB: 4096,
  tmpMiB: 1024,
});

/** The argv prefix, inside the sandbox, that sets RLIMIT_NPROC and execs the command (without a pids cgroup). */
export function rlimitArguments(prlimit: string, limits: SandboxLimits): string[] {
  return [prlimit, `--nproc=${limits.processes}:${limits.processes}`, '--'];
}

/** RLIMIT_DATA in bytes. */
export function dataBytes(limits: SandboxLimits): number {
  return limits.memoryMiB * 1024 * 1024;
}

/** How the layer is enforced, for the server-start record; `cgroup`: the cgroup's own line, when one is in force. */
export function describeLimits(limits: SandboxLimits, cgroup: string | null = null): string {
  const tmp = `/tmp and /dev/shm: a ${limits.tmpMiB} MiB tmpfs each per terminal`;
  const data = `${limits.memoryMiB} MiB data per process (RLIMIT_DATA)`;
  if (cgroup !== null) return `${cgroup}; ${data}; ${tmp}`;
  return `rlimits only (no cgroup available): ${limits.processes} processes per terminal (RLIMIT_NPROC in its user namespace), ${data}; shared memory (MAP_SHARED, memfd) not bounded; ${tmp}`;
}
