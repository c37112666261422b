/**
 * The adapters of @termgate/termhost, reachable only as
 * `@termgate/termhost/adapters`: the technology behind the package's ports.
 * Only a composition root (the CLI), tests and benchmarks import them; the
 * package index exports the domain and the ports alone. Named exports only.
 */

export {
  type CgroupLauncher,
  CgroupProcessSpawner,
  createTerminalCgroupRoot,
} from './cgroup-process-spawner.js';
export { CrossSpawnProcessSpawner } from './cross-spawn-process-spawner.js';
export { DeferredTerminalHost } from './deferred-terminal-host.js';
export { findOnPath } from './executable-check.js';
export { type LaunchSteps, launch, launcherArgv } from './perl-launcher.js';
export {
  BubblewrapSandbox,
  type BubblewrapSandboxOptions,
  SANDBOX_PROXY_PORT,
  type SandboxLayers,
  type SandboxNetwork,
} from './sandbox/bubblewrap-sandbox.js';
export type {
  ProxiedConnection,
  RefusalReason,
  RefusedConnection,
} from './sandbox/http-allowlist-proxy.js';
export {
  DEFAULT_SANDBOX_USER,
  grantSandboxAccess,
  resolveSandboxIdentity,
  type SandboxIdentity,
} from './sandbox/sandbox-identity.js';
export { DEFAULT_SANDBOX_LIMITS, type SandboxLimits } from './sandbox/sandbox-limits.js';
export { SandboxUnavailableError } from './sandbox/sandbox-unavailable-error.js';
export { compileSeccompFilter, REFUSED_SYSCALLS } from './sandbox/seccomp-filter.js';
export { SETPRIV_DROP_PTRACE, SetprivProcessSpawner } from './setpriv-process-spawner.js';
export { type TerminalCgroup, type TerminalCgroupLimits, TerminalCgroups } from './terminal-cgroups.js';
