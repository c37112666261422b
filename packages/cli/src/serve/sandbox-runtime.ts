import { lstatSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir, totalmem } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { AuditSink } from '@termgate/audit';
import type { LoadedPolicy, SandboxProfileSource } from '@termgate/policy';
import type { ProcessSpawner } from '@termgate/termhost';
import type { BubblewrapSandbox as BubblewrapSandboxType } from '@termgate/termhost/adapters';

/** A started sandbox: the gate's profiler, the spawner that enforces it, and its end. */
export interface SandboxRuntime {
  /** Computes each create's profile in a worker thread, off the event loop. */
  readonly profiler: SandboxProfileSource;
  readonly wrap: (inner: ProcessSpawner) => ProcessSpawner;
  /** Ends the shared network namespace and the proxy, removes the private /tmp. Idempotent. */
  readonly close: () => void;
  /** Each confinement layer in force, one line each, for the server-start record. */
  readonly layers: Readonly<Record<string, string>>;
  /** Resolves with the reason once a part the sandbox needs died (see `BubblewrapSandbox.failed`). */
  readonly failed: Promise<string>;
}

export interface SandboxPaths {
  readonly policyPath: string;
  readonly auditPath: string;
  readonly installRoot: string;
  /** The audit checkpoint signing key, hidden from every command. */
  readonly signingKeyPath?: string | null;
  /** The profiler thread's script; default the one built next to `@termgate/policy` (tests running sources point at it). */
  readonly profilerWorkerPath?: string;
}

/**
 * Starts the policy's sandbox, or returns `null` when its mode is `off`.
 * Throws (and leaves nothing running) when it cannot: `serve` and
 * `acp-proxy` then refuse to start.
 *
 * Whatever the policy says, the policy file and termgate's installation
 * are read-only inside, and the audit trail's directory is hidden (the
 * link, every rotated segment, the lock). A trail whose directory is, lies
 * in or holds a writable directory cannot be protected: that is refused.
 * The signing key, when there is one, and every server's runtime directory
 * are hidden too.
 *
 * The installation is its root directory, unless a writable directory lies
 * inside it (termgate run on its own checkout): then every entry of the
 * root that holds no writable directory.
 */
export async function startSandbox(
  policy: LoadedPolicy,
  paths: SandboxPaths,
  sink: AuditSink,
): Promise<SandboxRuntime | null> {
  const section = policy.sandbox;
  if (section.mode === 'off') return null;
  const {
    BubblewrapSandbox,
    DEFAULT_SANDBOX_LIMITS,
    DEFAULT_SANDBOX_USER,
    grantSandboxAccess,
    resolveSandboxIdentity,
  } = await import('@termgate/termhost/adapters');
  const { networkAllowedEvent, networkRefusedEvent } = await import('@termgate/policy');
  const { WorkerThreadSandboxProfiler } = await import('@termgate/policy/adapters');
  // First: on a machine where bubblewrap cannot run, that is the one thing to say.
  await BubblewrapSandbox.check();
  // Canonical paths: what the profiler protects must not lead through a symlink.
  const auditDir = realpathSync(dirname(paths.auditPath));
  const auditPath = join(auditDir, basename(paths.auditPath));
  const within = (path: string, dir: string): boolean => path === dir || path.startsWith(`${dir}/`);
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
  const limits = {
    processes: policy.limits.processes ?? DEFAULT_SANDBOX_LIMITS.processes,
    memoryMiB: policy.limits.memoryMiB ?? DEFAULT_SANDBOX_LIMITS.memoryMiB,
    tmpMiB: policy.limits.tmpMiB ?? DEFAULT_SANDBOX_LIMITS.tmpMiB,
    // The terminals' sum: by default half the machine, so that no number of them takes the host.
    totalMemoryMiB: policy.limits.totalMemoryMiB ?? Math.max(64, Math.floor(totalmem() / 2 / 1024 / 1024)),
  };
  const runtimeBase = ownPrivateDirectory(join(tmpdir(), `termgate-sandbox-${process.getuid?.() ?? 'user'}`));
  const runtimeDir = mkdtempSync(join(runtimeBase, 'run-'));
  const privateTmp = join(runtimeDir, 'tmp');
  mkdirSync(privateTmp, { mode: 0o700 });
  let sandbox: BubblewrapSandboxType;
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
        realpathSync(paths.installRoot),
        ...(paths.signingKeyPath ? [realpathSync(paths.signingKeyPath)] : []),
        join(runtimeDir, 'proxy.sock'),
      ];
      grantSandboxAccess(identity, section.writable, reached, section.unixSockets?.allow ?? []);
    }
    sandbox = await BubblewrapSandbox.start({
      identity,
      limits,
      runtimeDir,
      network:
        typeof section.network === 'string'
          ? section.network
          : {
              allow: section.network.allow,
              onRefused: (refused) => {
                try {
                  sink.append(networkRefusedEvent(refused));
                } catch {
                  // The refusal stands; the sink's failure refuses the next decision.
                }
              },
              onAllowed: (allowed) => {
                try {
                  sink.append(networkAllowedEvent(allowed));
                } catch {
                  // The sink's failure refuses the next decision.
                }
              },
            },
    });
  } catch (error) {
    rmSync(runtimeDir, { recursive: true, force: true });
    throw error;
  }
  let profiler: InstanceType<typeof WorkerThreadSandboxProfiler>;
  try {
    profiler = new WorkerThreadSandboxProfiler(section, {
      ...(paths.profilerWorkerPath !== undefined && { workerPath: paths.profilerWorkerPath }),
      privateTmp,
      protect: {
        readOnly: [
          realpathSync(paths.policyPath),
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
  const writable = section.writable.join(', ') || '(none)';
  return {
    layers: {
      ...sandbox.layers,
      view: `the host's filesystem read-only; ${(section.allowlistedTrees ?? []).join(', ') || '(no tree)'} emptied but for what is readable; writable: ${writable}; the hidden paths covered; /tmp each terminal's own`,
      sockets: `host Unix sockets covered unless allowed by path (${(section.unixSockets?.allow ?? []).join(', ') || 'none'})`,
    },
    profiler,
    wrap: (inner) => sandbox.spawner(inner),
    failed: sandbox.failed,
    close: () => {
      if (closed) return;
      closed = true;
      void profiler.close();
      void sandbox.close().finally(() => rmSync(runtimeDir, { recursive: true, force: true }));
    },
  };
}

/** What of the installation to keep read-only (see `startSandbox`). */
function installation(root: string, writable: readonly string[]): string[] {
  const inside = (path: string, dir: string): boolean => path === dir || path.startsWith(`${dir}/`);
  if (!writable.some((w) => inside(w, root))) return [root];
  return readdirSync(root)
    .map((entry) => join(root, entry))
    .filter((entry) => !writable.some((w) => inside(w, entry)));
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
