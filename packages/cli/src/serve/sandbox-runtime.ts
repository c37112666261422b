import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { AuditSink, LoadedPolicy, SandboxProfiler as SandboxProfilerType } from '@termgate/policy';
import type { BubblewrapSandbox as BubblewrapSandboxType, ProcessSpawner } from '@termgate/termhost';

/** A started sandbox: the gate's profiler, the spawner that enforces it, and its end. */
export interface SandboxRuntime {
  readonly profiler: SandboxProfilerType;
  readonly wrap: (inner: ProcessSpawner) => ProcessSpawner;
  /** Ends the shared network namespace and the proxy, removes the private /tmp. Idempotent. */
  readonly close: () => void;
}

export interface SandboxPaths {
  readonly policyPath: string;
  readonly auditPath: string;
  readonly installRoot: string;
  /** The audit checkpoint signing key, hidden from every command. */
  readonly signingKeyPath?: string | null;
}

/**
 * Starts the policy's sandbox, or returns `null` when its mode is `off`.
 * Throws (and leaves nothing running) when it cannot: `serve` and
 * `acp-proxy` then refuse to start.
 *
 * Whatever the policy says, the policy file and termgate's installation
 * are read-only inside, and the audit trail is hidden: its directory, or,
 * when that directory holds a writable one, the trail's files (the link,
 * its rotated segments as they exist at each create, the lock). A trail
 * inside a writable directory cannot be protected: that is refused. The
 * signing key, when there is one, is hidden too.
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
  const { BubblewrapSandbox } = await import('@termgate/termhost');
  const { networkRefusedEvent, SandboxProfiler } = await import('@termgate/policy');
  const auditDir = dirname(paths.auditPath);
  const within = (path: string, dir: string): boolean => path === dir || path.startsWith(`${dir}/`);
  const holding = section.writable.find((root) => within(paths.auditPath, root));
  if (holding !== undefined) {
    throw new Error(
      `the audit trail ${paths.auditPath} lies inside the sandbox's writable directory ${holding}, where commands could rewrite it; give --audit a path outside every writable directory`,
    );
  }
  for (const root of section.writable) {
    try {
      mkdirSync(root, { recursive: true });
    } catch {
      // A writable directory that cannot be created is simply not bound.
    }
  }
  const hideWholeDir = !section.writable.some((root) => within(root, auditDir));
  const runtimeDir = mkdtempSync(join(tmpdir(), 'termgate-sandbox-'));
  const privateTmp = join(runtimeDir, 'tmp');
  mkdirSync(privateTmp, { mode: 0o700 });
  let sandbox: BubblewrapSandboxType;
  try {
    sandbox = await BubblewrapSandbox.start({
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
            },
    });
  } catch (error) {
    rmSync(runtimeDir, { recursive: true, force: true });
    throw error;
  }
  const profiler = new SandboxProfiler(section, {
    privateTmp,
    protect: {
      readOnly: [paths.policyPath, ...installation(paths.installRoot, section.writable)],
      // Read at every create: a rotation adds segments next to the trail.
      get hidden() {
        return [
          ...(hideWholeDir ? [auditDir] : trailFiles(paths.auditPath)),
          ...(paths.signingKeyPath ? [paths.signingKeyPath] : []),
        ];
      },
    },
  });
  let closed = false;
  return {
    profiler,
    wrap: (inner) => sandbox.spawner(inner),
    close: () => {
      if (closed) return;
      closed = true;
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

/** The trail's link or file, its lock, and its rotated segments `NAME.<stamp>.EXT` next to it. */
function trailFiles(auditPath: string): string[] {
  const dir = dirname(auditPath);
  const name = basename(auditPath);
  const dot = name.lastIndexOf('.');
  const stem = dot > 0 ? name.slice(0, dot) : name;
  const ext = dot > 0 ? name.slice(dot) : '';
  let siblings: string[] = [];
  try {
    siblings = readdirSync(dir).filter((n) => n !== name && n.startsWith(`${stem}.`) && n.endsWith(ext));
  } catch {
    siblings = [];
  }
  return [auditPath, `${auditPath}.lock`, ...siblings.map((n) => join(dir, n))];
}
