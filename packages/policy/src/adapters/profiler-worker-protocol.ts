import type { SandboxProfile } from '@termgate/termhost';
import type { ProtectedPaths } from '../sandbox/sandbox-profiler.js';

/**
 * The messages between `WorkerThreadSandboxProfiler` and its thread
 * (`profiler-worker.ts`). The policy's sandbox section and the private
 * `/tmp` go once, as `workerData`; each request carries the protected paths
 * as they are now (they change when the trail rotates).
 */
export interface ToProfiler {
  readonly id: number;
  readonly cwd: string;
  readonly protect: ProtectedPaths;
}

export type FromProfiler =
  | { readonly id: number; readonly profile: SandboxProfile }
  | { readonly id: number; readonly error: string };
