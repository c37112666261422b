import { readFileSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import type { KernelConfinement } from './bubblewrap-arguments.js';
import { findOnPath } from './executable-check.js';
import type { LaunchSteps } from './perl-launcher.js';
import type { SandboxIdentity } from './sandbox-identity.js';
import {
  DEFAULT_SANDBOX_LIMITS,
  dataBytes,
  describeLimits,
  rlimitArguments,
  type SandboxLimits,
} from './sandbox-limits.js';
import { SandboxUnavailableError } from './sandbox-unavailable-error.js';
import { compileSeccompFilter, type LandlockFilterRules, type SeccompFilter } from './seccomp-filter.js';
import { type TerminalCgroup, TerminalCgroups } from './terminal-cgroups.js';

/**
 * The kernel layers of a sandbox (identity, keyring, syscall filter,
 * limits), set up once per server start, and the launcher steps that apply
 * them to every command (see `perl-launcher.ts`).
 */

/** The layers in force, one line each, for the server-start record. */
export interface SandboxLayers {
  readonly identity: string;
  readonly keyring: string;
  readonly filter: string;
  readonly limits: string;
}

/** The kernel layers a started sandbox applies to every command (see `BubblewrapSandbox.start`). */
export interface KernelLayers {
  readonly identity: SandboxIdentity | null;
  /** The launcher's interpreter (see `perl-launcher.ts`), first of the chain. */
  readonly perl: string;
  /** A cgroup per terminal, or `null` (rlimits only). */
  readonly cgroups: TerminalCgroups | null;
  readonly limits: SandboxLimits;
  /** Inside bwrap, before the command: RLIMIT_NPROC when no pids cgroup bounds the terminal, else nothing. */
  readonly inner: readonly string[];
  readonly filter: SeccompFilter;
  readonly confinement: KernelConfinement;
  readonly layers: SandboxLayers;
}

/** What `kernelLayers` is set up from (the `BubblewrapSandboxOptions` it reads). */
export interface KernelOptions {
  readonly runtimeDir: string;
  readonly identity?: SandboxIdentity | null;
  readonly limits?: SandboxLimits;
  readonly cgroups?: boolean;
  /** The Landlock tier's additions to the syscall filter (`seccomp-filter.ts`); absent: the namespaces tier's filter. */
  readonly landlock?: LandlockFilterRules;
}

/** The filter's descriptor in the spawned chain: the first one after stdin, stdout and stderr. */
const SECCOMP_FD = 3;

export const SYSTEM_PATH = '/usr/bin:/bin:/usr/sbin:/sbin';

export function kernelLayers(options: KernelOptions): KernelLayers {
  const identity = options.identity ?? null;
  if (identity === null && process.getuid?.() === 0) {
    throw new SandboxUnavailableError(
      'termgate serves as root and no unprivileged identity was given: sandboxed commands would be uid 0 to the kernel',
      'create the sandbox user (node scripts/ensure-system-packages.mjs --runtime) or name one in sandbox.user',
    );
  }
  const limits = options.limits ?? DEFAULT_SANDBOX_LIMITS;
  const perl = findProgram('perl', SYSTEM_PATH, 'perl-base');
  const cgroups = options.cgroups === false ? null : TerminalCgroups.detect();
  if (cgroups !== null && limits.totalMemoryMiB !== undefined) {
    try {
      cgroups.capTotal(limits.totalMemoryMiB * 1024 * 1024);
    } catch (error) {
      throw new SandboxUnavailableError(
        `the memory limit of all terminals together cannot be set: ${(error as Error).message}`,
        'check that the cgroup file system is writable for termgate',
      );
    }
  }
  const prlimit = cgroups === null ? findProgram('prlimit', SYSTEM_PATH, 'util-linux') : null;
  const filter = compileSeccompFilter(join(options.runtimeDir, 'seccomp.bpf'), options.landlock);
  return {
    identity,
    perl,
    cgroups,
    limits,
    inner: prlimit === null ? [] : rlimitArguments(prlimit, limits),
    filter,
    confinement: { seccompFd: SECCOMP_FD, disableUserns: true, tmpBytes: limits.tmpMiB * 1024 * 1024 },
    layers: {
      identity:
        identity === null
          ? `the server's own uid ${process.getuid?.() ?? '?'} (not root)`
          : `user ${identity.user} (uid ${identity.uid}, gid ${identity.gid}, no supplementary groups)`,
      keyring: 'a fresh, empty session keyring per command',
      filter: `seccomp (libseccomp), native ABI only; refused: ${filter.refused.join(', ')}; no nested user namespaces (--disable-userns)`,
      limits: describeLimits(
        limits,
        cgroups === null
          ? null
          : `${cgroups.describe(cgroupLimits(limits))}${limits.totalMemoryMiB === undefined ? '' : `; ${limits.totalMemoryMiB} MiB for all terminals together`}`,
      ),
    },
  };
}

/** What the launcher does for every command (see `perl-launcher.ts`). */
export function kernelSteps(
  kernel: KernelLayers,
  own: { argsFile?: string; cgroup: TerminalCgroup | null; namespaces: LaunchSteps['namespaces'] },
): LaunchSteps {
  return {
    ...(own.argsFile !== undefined && { argsFile: own.argsFile }),
    ...(own.cgroup !== null && { cgroups: own.cgroup.directories }),
    dataBytes: dataBytes(kernel.limits),
    ...(kernel.identity !== null && { identity: kernel.identity }),
    ...(own.namespaces !== undefined && { namespaces: own.namespaces }),
    keyring: true,
  };
}

/**
 * inotify bounds for all the terminals of one server together, set in the
 * user namespace they share: half of what the kernel allows the uid in the
 * initial namespace (`fs.inotify.max_user_instances`, 128 by default, and
 * `max_user_watches`), so that the commands can never take what the
 * person's own editors and watchers of that uid need.
 */
export function inotifyBounds(): { instances: number; watches: number } {
  const half = (file: string, fallback: number): number => {
    let value = Number.NaN;
    try {
      value = Number.parseInt(readFileSync(`/proc/sys/fs/inotify/${file}`, 'utf8').trim(), 10);
    } catch {
      // no inotify sysctl here: the kernel's defaults
    }
    return Math.max(1, Math.floor((Number.isSafeInteger(value) && value > 0 ? value : fallback) / 2));
  };
  return { instances: half('max_user_instances', 128), watches: half('max_user_watches', 8192) };
}

export function cgroupLimits(limits: SandboxLimits): { memoryBytes: number; pids: number } {
  return { memoryBytes: limits.memoryMiB * 1024 * 1024, pids: limits.processes };
}

export function findProgram(name: string, path: string, debianPackage: string): string {
  // Only absolute PATH entries: the sandbox's own tools must not come from the cwd.
  const found = findOnPath(name, path.split(delimiter).filter(isAbsolute).join(delimiter));
  if (found !== null) return found;
  throw new SandboxUnavailableError(
    `${name} was not found on PATH`,
    `install the Debian/Ubuntu package "${debianPackage}" (apt-get install ${debianPackage}), or set \`sandbox.mode: off\` in the policy to run unconfined`,
  );
}
