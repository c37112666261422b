import type { SandboxProfile } from '@termgate/termhost';

/**
 * Computes the sandbox profile one command runs under, from what is on disk
 * now (so a repository or hooks directory a command just made is protected
 * from the next one on). The gate asks it for every create it does not deny.
 *
 * It may answer synchronously (`SandboxProfiler`, in the caller's thread) or
 * with a promise (`WorkerThreadSandboxProfiler`, whose file-system reads and
 * `git config` runs stay off the caller's event loop). A throw or a
 * rejection means no profile: the gate refuses the create, nothing runs.
 */
export interface SandboxProfileSource {
  /** False when the policy's sandbox is off: creates carry no profile. */
  readonly enabled: boolean;
  profile(cwd: string): SandboxProfile | Promise<SandboxProfile>;
}
