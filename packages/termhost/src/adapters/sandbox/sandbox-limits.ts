/**
 * What one terminal of a sandbox may use. Enforced with rlimits (util-linux
 * `prlimit`, run inside the sandbox as the last step before the command):
 *
 * - `processes`: RLIMIT_NPROC, soft and hard. The kernel counts it per user
 *   namespace, and every terminal has a user namespace of its own, so it
 *   bounds the processes and threads of that terminal, not of the uid.
 * - `memoryMiB`: RLIMIT_DATA (heap and private writable mappings), per
 *   process: rlimits cannot bound a tree's total; a cgroup could.
 * - `tmpMiB`: the size of the terminal's private `/tmp` tmpfs.
 *
 * A command cannot raise them (it has no CAP_SYS_RESOURCE); hitting one
 * fails that command's fork, allocation or write, nothing else.
 */
export interface SandboxLimits {
  readonly processes: number;
  readonly memoryMiB: number;
  readonly tmpMiB: number;
}

/** Defaults a developer's work fits in: a parallel build, a dev server, a test run. */
export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = Object.freeze({
  processes: 1024,
  memoryMiB: 4096,
  tmpMiB: 1024,
});

/** The argv prefix, inside the sandbox, that sets the rlimits and execs the command. */
export function rlimitArguments(prlimit: string, limits: SandboxLimits): string[] {
  const data = limits.memoryMiB * 1024 * 1024;
  return [prlimit, `--nproc=${limits.processes}:${limits.processes}`, `--data=${data}:${data}`, '--'];
}

/** How the layer is enforced, for the server-start record. */
export function describeLimits(limits: SandboxLimits): string {
  return `rlimits: ${limits.processes} processes per terminal (RLIMIT_NPROC in its user namespace), ${limits.memoryMiB} MiB data per process (RLIMIT_DATA); /tmp: a ${limits.tmpMiB} MiB tmpfs per terminal`;
}
