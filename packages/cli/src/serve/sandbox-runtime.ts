import type { AuditSink } from '@termgate/audit';
import type { LoadedPolicy, SandboxProfileSource } from '@termgate/policy';
import type { Sandbox } from '@termgate/termhost/sandbox';

/** A started sandbox (`@termgate/termhost/sandbox`) whose profile source is the policy's profiler thread. */
export type SandboxRuntime = Sandbox<SandboxProfileSource & { close(): Promise<void> }>;

export interface SandboxPaths {
  readonly policyPath: string;
  /** The managed policy layer's file, read-only inside like the policy (hidden too when its sandbox section hides it). */
  readonly managedPolicyPath?: string | null;
  readonly auditPath: string;
  readonly installRoot: string;
  /** The audit checkpoint signing key, hidden from every command. */
  readonly signingKeyPath?: string | null;
  /** The profiler thread's script; default the one built next to `@termgate/policy` (tests running sources point at it). */
  readonly profilerWorkerPath?: string;
}

/**
 * Starts the policy's sandbox, or returns `null` when its mode is `off`;
 * throws when it cannot, and `serve` and `acp-proxy` refuse to start. Only
 * configuration is passed here: the policy's `sandbox` section and limits,
 * the server's own paths, the audit records of the proxy's connections, and
 * the profiler thread (which computes each create's profile off the event
 * loop). What stays protected whatever the policy says, the identity and
 * the defaults are `startSandbox`'s (packages/termhost/src/sandbox/start-sandbox.ts).
 */
export async function startSandbox(
  policy: LoadedPolicy,
  paths: SandboxPaths,
  sink: AuditSink,
): Promise<SandboxRuntime | null> {
  const section = policy.sandbox;
  // Loaded only when the sandbox is on.
  if (section.mode === 'off') return null;
  const { startSandbox: start } = await import('@termgate/termhost/sandbox');
  const { networkAllowedEvent, networkRefusedEvent } = await import('@termgate/policy');
  const { WorkerThreadSandboxProfiler } = await import('@termgate/policy/adapters');
  return start({
    settings: section,
    limits: policy.limits,
    paths,
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
    profiler: (setup) =>
      new WorkerThreadSandboxProfiler(section, {
        ...(paths.profilerWorkerPath !== undefined && { workerPath: paths.profilerWorkerPath }),
        ...setup,
      }),
  });
}
