/**
 * The sandbox of @termgate/termhost, reachable only as
 * `@termgate/termhost/sandbox`: everything that confines a command.
 *
 * The composition root calls two functions: `startSandbox` with the
 * policy's `sandbox` section, its limits and the server's own paths (it
 * decides what stays protected whatever the policy says, the identity, the
 * limits' defaults, and probes bubblewrap first), and `commandSpawner`,
 * which returns the spawner of the started sandbox, or without one the
 * strongest confinement a plain spawn gets (a cgroup, setpriv).
 *
 * The parts below them are exported for tests and benchmarks: the pure
 * argument builder (`bubblewrap-arguments.ts`), `BubblewrapSandbox` (the
 * network namespace holder, the kernel layers, the spawn), the proxy, the
 * launcher, the cgroups. Named exports only.
 */

export {
  bubblewrapArguments,
  filesystemArguments,
  type KernelConfinement,
  kernelArguments,
  NO_KERNEL_LAYERS,
} from './bubblewrap-arguments.js';
export {
  BubblewrapSandbox,
  type BubblewrapSandboxOptions,
  SANDBOX_PROXY_PORT,
  type SandboxLayers,
  type SandboxNetwork,
} from './bubblewrap-sandbox.js';
export {
  type CgroupLauncher,
  CgroupProcessSpawner,
  createTerminalCgroupRoot,
} from './cgroup-process-spawner.js';
export { commandSpawner, type SpawnerLog } from './command-spawner.js';
export { findOnPath } from './executable-check.js';
export type { ProxiedConnection, RefusalReason, RefusedConnection } from './http-allowlist-proxy.js';
export { type LandlockSteps, landlockArgv, landlockVersionArgv, type PathRule } from './landlock-launcher.js';
export { LANDLOCK_MIN_ABI, landlockRules } from './landlock-rules.js';
export { LandlockSandbox, type LandlockSandboxOptions } from './landlock-sandbox.js';
export { type LaunchSteps, launch, launcherArgv } from './perl-launcher.js';
export {
  DEFAULT_SANDBOX_USER,
  grantSandboxAccess,
  resolveSandboxIdentity,
  type SandboxIdentity,
} from './sandbox-identity.js';
export { DEFAULT_SANDBOX_LIMITS, type SandboxLimits } from './sandbox-limits.js';
export { SandboxUnavailableError } from './sandbox-unavailable-error.js';
export { compileSeccompFilter, type LandlockFilterRules, REFUSED_SYSCALLS } from './seccomp-filter.js';
export { SETPRIV_DROP_PTRACE, SetprivProcessSpawner } from './setpriv-process-spawner.js';
export {
  landlockViewLayers,
  type ProfilerSetup,
  type Sandbox,
  type SandboxConfig,
  type SandboxSettings,
  type ServerPaths,
  sandboxLimits,
  startSandbox,
  viewLayers,
} from './start-sandbox.js';
export { type TerminalCgroup, type TerminalCgroupLimits, TerminalCgroups } from './terminal-cgroups.js';
export { type ChosenTier, chooseTier, type SandboxTier, type SandboxTierSetting } from './tier.js';
