import { lstatSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir, totalmem } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { ProcessSpawner } from '../ports/process-spawner.js';
import { BubblewrapSandbox } from './bubblewrap-sandbox.js';
import { LandlockSandbox } from './landlock-sandbox.js';
import type { ProxiedConnection, RefusedConnection } from './refusal-window.js';
import { DEFAULT_SANDBOX_USER, grantSandboxAccess, resolveSandboxIdentity } from './sandbox-identity.js';
import { DEFAULT_SANDBOX_LIMITS, type SandboxLimits } from './sandbox-limits.js';
import { chooseTier, noTierWorks, type SandboxTierSetting } from './tier.js';

/**
 * What the sandbox is asked to enforce: the policy file's `sandbox` section
 * as the policy package loads it (absolute, resolved paths). The policy
 * decides what a command may see; this module decides what must stay
 * protected whatever the policy says, and how.
 */
export interface SandboxSettings {
  readonly mode: 'required' | 'off';
  /** Which tier confines commands (see `chooseTier`); absent: `auto`. */
  readonly tier?: SandboxTierSetting;
  readonly writable: readonly string[];
  readonly readOnly: readonly string[];
  readonly hidden: readonly string[];
  readonly network: 'none' | 'all' | { readonly allow: readonly string[] };
  /** The unprivileged user commands run as when the server is root; `null` or absent: `termgate-sandbox`. */
  readonly user?: string | null;
  /** The allowlisted view's emptied trees. */
  readonly allowlistedTrees?: readonly string[];
  /** Paths inside the allowlisted trees shown read-only. */
  readonly readable?: readonly string[];
  /** Host Unix sockets a command may connect to, by path. */
  readonly unixSockets?: { readonly allow: readonly string[] };
}

/** The server's own files, which no command may change or (but the first two) read. */
export interface ServerPaths {
  readonly policyPath: string;
  /** An administrator's managed policy file: read-only inside, like the policy. */
  readonly managedPolicyPath?: string | null;
  readonly auditPath: string;
  /** termgate's installation: read-only inside (see `startSandbox`). */
  readonly installRoot: string;
  /** The audit checkpoint signing key, hidden from every command. */
  readonly signingKeyPath?: string | null;
}

/** What the profile source needs from a started sandbox: the private `/tmp` and the paths it must protect. */
export interface ProfilerSetup {
  /** The host directory every terminal's private `/tmp` lives in. */
  readonly privateTmp: string;
  readonly protect: { readonly readOnly: readonly string[]; readonly hidden: readonly string[] };
}

export interface SandboxConfig<P extends { close(): unknown }> {
  readonly settings: SandboxSettings;
  /** The policy's per-terminal limits; each absent one takes its default (`DEFAULT_SANDBOX_LIMITS`; the total: half the machine). */
  readonly limits: Partial<SandboxLimits>;
  readonly paths: ServerPaths;
  /** A connection the allowlist proxy refused, for the audit trail. Must not throw. */
  readonly onRefused: (refused: RefusedConnection) => void;
  /** An allowed connection (folded per window like refusals), for the audit trail. Must not throw. */
  readonly onAllowed?: (allowed: ProxiedConnection) => void;
  /** Builds the gate's profile source once the sandbox stands; closed with it. */
  readonly profiler: (setup: ProfilerSetup) => P;
}

/** A started sandbox: the gate's profile source, the spawner that enforces it, and its end. */
export interface Sandbox<P> {
  /** The profile source `SandboxConfig.profiler` built. */
  readonly profiler: P;
  /** A spawner that runs every request of `inner` inside the sandbox (see `BubblewrapSandbox.spawner`). */
  readonly spawner: (inner: ProcessSpawner) => ProcessSpawner;
  /** Ends the shared network namespace and the proxy, removes the private /tmp. Idempotent. */
  readonly close: () => void;
  /** Each confinement layer in force, one line each, for the server-start record. */
  readonly layers: Readonly<Record<string, string>>;
  /** Resolves with the reason once a part the sandbox needs died (see `BubblewrapSandbox.failed`). */
  readonly failed: Promise<string>;
}

/**
 * Starts the sandbox `config.settings` asks for, or returns `null` when its
 * mode is `off`. Throws (and leaves nothing running) when it cannot: the
 * server then refuses to start. First, the probe: on a machine where
 * bubblewrap cannot run, that is the one thing to say.
 *
 * Whatever the settings say, the policy file, the managed policy file and
 * termgate's installation are read-only inside, and the audit trail's directory is hidden (the
 * link, every rotated segment, the lock). A trail whose directory is, lies
 * in or holds a writable directory cannot be protected: that is refused.
 * The signing key, when there is one, and every server's runtime directory
 * are hidden too.
 *
 * The installation is its root directory, unless a writable directory lies
 * inside it (termgate run on its own checkout): then every entry of the
 * root that holds no writable directory.
 *
 * Served as root, commands run as the unprivileged `settings.user` (default
 * `termgate-sandbox`), never uid 0 to the kernel; otherwise as the server's
 * own uid. The memory of all terminals together is bounded by
 * `limits.totalMemoryMiB`, by default half the machine.
 */
export async function startSandbox<P extends { close(): unknown }>(
  config: SandboxConfig<P>,
): Promise<Sandbox<P> | null> {
  const { settings: section, paths } = config;
  if (section.mode === 'off') return null;
  // First, the tier: on a machine where neither can run, that is the one thing to say.
  const tier = await chooseTier(section);
  // Canonical paths: what the profiler protects must not lead through a symlink.
  const auditDir = realpathSync(dirname(paths.auditPath));
  const auditPath = join(auditDir, basename(paths.auditPath));
  // The trail's directory is hidden whole, so that files a rotation adds later are hidden too;
  // that is impossible when it is, or holds, a directory commands may write.
  const clash = section.writable.find((root) => within(auditPath, root) || within(root, auditDir));
  if (clash !== undefined) {
    throw new Error(
      `the audit trail's directory ${auditDir} ${within(auditPath, clash) ? 'lies inside' : 'holds'} the sandbox's writable directory ${clash}: commands could read or rewrite the trail; give --audit a directory of its own, outside every writable directory (the default ~/.local/state/termgate is one)`,
    );
  }
  for (const root of section.writable) {
    try {
      mkdirSync(root, { recursive: true });
    } catch {
      // A writable directory that cannot be created is simply not bound.
    }
  }
  // As root, commands run as an unprivileged user of their own, never uid 0 to the kernel.
  const identity =
    process.getuid?.() === 0 ? resolveSandboxIdentity(section.user ?? DEFAULT_SANDBOX_USER) : null;
  const limits = sandboxLimits(config.limits, totalmem());
  const runtimeBase = ownPrivateDirectory(join(tmpdir(), `termgate-sandbox-${process.getuid?.() ?? 'user'}`));
  const runtimeDir = mkdtempSync(join(runtimeBase, 'run-'));
  const privateTmp = join(runtimeDir, 'tmp');
  mkdirSync(privateTmp, { mode: 0o700 });
  let sandbox: BubblewrapSandbox | LandlockSandbox;
  try {
    if (identity !== null) {
      // The workspace and caches writable for it, and every directory the sandbox binds or covers reachable.
      const reached = [
        ...section.readOnly,
        ...section.hidden,
        ...(section.readable ?? []),
        ...(section.unixSockets?.allow ?? []),
        auditDir,
        realpathSync(paths.policyPath),
        ...(paths.managedPolicyPath ? [realpathSync(paths.managedPolicyPath)] : []),
        realpathSync(paths.installRoot),
        ...(paths.signingKeyPath ? [realpathSync(paths.signingKeyPath)] : []),
        join(runtimeDir, 'proxy.sock'),
      ];
      grantSandboxAccess(identity, section.writable, reached, section.unixSockets?.allow ?? []);
    }
    const network =
      typeof section.network === 'string'
        ? section.network
        : {
            allow: section.network.allow,
            onRefused: config.onRefused,
            ...(config.onAllowed !== undefined && { onAllowed: config.onAllowed }),
          };
    sandbox =
      tier.tier === 'namespaces'
        ? await BubblewrapSandbox.start({ identity, limits, runtimeDir, network })
        : await LandlockSandbox.start({ identity, limits, runtimeDir, privateTmp, network });
  } catch (error) {
    rmSync(runtimeDir, { recursive: true, force: true });
    throw noTierWorks(tier, error);
  }
  let profiler: P;
  try {
    profiler = config.profiler({
      privateTmp,
      protect: {
        readOnly: [
          realpathSync(paths.policyPath),
          ...(paths.managedPolicyPath ? [realpathSync(paths.managedPolicyPath)] : []),
          ...installation(realpathSync(paths.installRoot), section.writable),
        ],
        // Every server's runtime directory (its private /tmp and proxy socket) is hidden too.
        hidden: [
          auditDir,
          ...(paths.signingKeyPath ? [realpathSync(paths.signingKeyPath)] : []),
          runtimeBase,
        ],
      },
    });
  } catch (error) {
    await sandbox.close();
    rmSync(runtimeDir, { recursive: true, force: true });
    throw error;
  }
  let closed = false;
  return {
    layers:
      sandbox instanceof LandlockSandbox
        ? { ...sandbox.layers, ...landlockViewLayers(section), tier: `${sandbox.layers.tier}; ${tier.why}` }
        : { tier: `namespaces (bubblewrap); ${tier.why}`, ...sandbox.layers, ...viewLayers(section) },
    profiler,
    spawner: (inner) => sandbox.spawner(inner),
    failed: sandbox.failed,
    close: () => {
      if (closed) return;
      closed = true;
      void profiler.close();
      void sandbox.close().finally(() => rmSync(runtimeDir, { recursive: true, force: true }));
    },
  };
}

/**
 * The limits in force: the policy's, each absent one its default; the
 * terminals' sum by default half of `machineBytes` (at least 64 MiB), so
 * that no number of them takes the host.
 */
export function sandboxLimits(policy: Partial<SandboxLimits>, machineBytes: number): SandboxLimits {
  return {
    processes: policy.processes ?? DEFAULT_SANDBOX_LIMITS.processes,
    memoryMiB: policy.memoryMiB ?? DEFAULT_SANDBOX_LIMITS.memoryMiB,
    tmpMiB: policy.tmpMiB ?? DEFAULT_SANDBOX_LIMITS.tmpMiB,
    totalMemoryMiB: policy.totalMemoryMiB ?? Math.max(64, Math.floor(machineBytes / 2 / 1024 / 1024)),
  };
}

/** The filesystem view's and the host sockets' lines of the server-start record. */
export function viewLayers(section: SandboxSettings): { view: string; sockets: string } {
  const writable = section.writable.join(', ') || '(none)';
  return {
    view: `the host's filesystem read-only; ${(section.allowlistedTrees ?? []).join(', ') || '(no tree)'} emptied but for what is readable; writable: ${writable}; the hidden paths covered; /tmp each terminal's own`,
    sockets: `host Unix sockets covered unless allowed by path (${(section.unixSockets?.allow ?? []).join(', ') || 'none'})`,
  };
}

/** The view's and the sockets' lines of the server-start record in the Landlock tier. */
export function landlockViewLayers(section: SandboxSettings): { view: string; sockets: string } {
  const writable = section.writable.join(', ') || '(none)';
  return {
    view: `Landlock: reads granted on / but ${[...new Set(section.allowlistedTrees ?? [])].join(', ') || '(no tree)'} (but for what is readable), the hidden paths, /tmp and /dev/shm; writable: ${writable} (protected paths inside by their siblings); TMPDIR each terminal's own`,
    sockets:
      'no AF_UNIX socket can be opened (seccomp; socketpair works), abstract Unix sockets scoped to the command (Landlock)',
  };
}

function within(path: string, dir: string): boolean {
  return path === dir || path.startsWith(`${dir}/`);
}

/** What of the installation to keep read-only (see `startSandbox`). */
function installation(root: string, writable: readonly string[]): string[] {
  if (!writable.some((w) => within(w, root))) return [root];
  return readdirSync(root)
    .map((entry) => join(root, entry))
    .filter((entry) => !writable.some((w) => within(w, entry)));
}

/**
 * `dir`, created with mode 0700 when missing, and refused unless it is a
 * real directory of this user's that no one else can list or write: in a
 * shared /tmp, another user could have made it first. (Serving as root, the
 * sandbox user is given search access by ACL, which shows as group `x`.)
 */
function ownPrivateDirectory(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stat = lstatSync(dir);
  const uid = process.getuid?.();
  // Search-only for the group class is allowed: it is the ACL mask once the sandbox user may pass through.
  if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid) || (stat.mode & 0o067) !== 0) {
    throw new Error(`${dir} is not a private directory of this user's (mode 0700, not a symlink)`);
  }
  return realpathSync(dir);
}
