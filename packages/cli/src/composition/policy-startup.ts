import type { ProcessTerminalHost } from '@termgate/termhost';
import type { PolicyRuntime } from './policy-runtime.js';

/**
 * The policy side, started on first use (POLICY_STARTUP). The first call of
 * either method imports policy-module.ts (and with it @termgate/policy) and
 * starts the policy side in its fail-closed order; later calls share that
 * start. Both reject, and keep rejecting, when it could not start: nothing
 * runs then.
 */
export interface PolicyStartup {
  /** The started runtime (`server-start` recorded). */
  runtime(): Promise<PolicyRuntime>;
  /** The gated host, built once the runtime started. */
  host(): Promise<ProcessTerminalHost>;
}
