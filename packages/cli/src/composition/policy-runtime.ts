import type { AuditSink, ChainHead } from '@termgate/audit';
import type { LoadedPolicy, PolicyGate } from '@termgate/policy';
import type { SandboxRuntime } from '../serve/sandbox-runtime.js';

/** An audit sink that knows the head of its hash chain. */
export type ChainedAuditSink = AuditSink & { readonly head: ChainHead | null };

/** What the policy side of `serve` and `acp-proxy` is made of once it started (POLICY_RUNTIME). */
export interface PolicyRuntime {
  readonly policy: LoadedPolicy;
  readonly gate: PolicyGate;
  readonly sink: ChainedAuditSink;
  readonly auditPath: string;
  /** The started sandbox, or `null` when the policy's sandbox mode is `off`. */
  readonly sandbox: SandboxRuntime | null;
  /**
   * The checkpoint signing key's file (absolute), or null. It was read at
   * start; a sandbox must hide this path (and should hide the trail) from
   * the commands it runs.
   */
  readonly auditSigningKeyPath: string | null;
  /**
   * Appends `server-stop`, closes the trail and ends the judge's worker
   * process. Returns the trail's head after the stop record (null when it
   * could not be written), for the caller to print as an external anchor.
   * Call after every terminal ended. Idempotent.
   */
  readonly stop: (reason: string) => ChainHead | null;
}

/** `SEQ:HASH`, the form `termgate audit verify --anchor` takes. */
export function anchorOf(head: ChainHead | null): string {
  return head === null ? '(empty)' : `${head.seq}:${head.hash}`;
}
