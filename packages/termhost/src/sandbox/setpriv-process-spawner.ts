import type { ProcessSpawner, SpawnedProcess, SpawnRequest } from '../ports/process-spawner.js';
import { assertExecutable } from './executable-check.js';

/**
 * What `setpriv` (util-linux) is told: drop CAP_SYS_PTRACE from the
 * inheritable and bounding sets before exec, so the command (and everything
 * it starts) runs without it, for good.
 */
export const SETPRIV_DROP_PTRACE: readonly string[] = Object.freeze([
  '--inh-caps=-sys_ptrace',
  '--bounding-set=-sys_ptrace',
  '--',
]);

/**
 * A {@link ProcessSpawner} for a server running as root: every command is
 * started through `setpriv` without CAP_SYS_PTRACE.
 *
 * Why: `/proc/<pid>/fd/N` of another process opens only with ptrace read
 * access. Between processes of the same uid the kernel then also requires
 * (commoncap) that the caller's permitted capabilities include the
 * target's, or CAP_SYS_PTRACE. A root command lacking CAP_SYS_PTRACE
 * therefore cannot reopen the server's stdin or stdout through
 * `/proc/$PPID/fd`, nor ptrace it. It keeps every other power of root.
 *
 * Contract: as the wrapped spawner's, with the program checked first (found
 * on the request's PATH, executable), so a missing program still rejects
 * with `ENOENT` (or `EACCES`) instead of becoming setpriv's exit code 127.
 */
export class SetprivProcessSpawner implements ProcessSpawner {
  constructor(
    private readonly inner: ProcessSpawner,
    /** Absolute path of `setpriv`. */
    private readonly setpriv: string,
  ) {}

  async spawn(request: SpawnRequest): Promise<SpawnedProcess> {
    assertExecutable(request);
    return this.inner.spawn({ ...request, argv: [this.setpriv, ...SETPRIV_DROP_PTRACE, ...request.argv] });
  }
}
