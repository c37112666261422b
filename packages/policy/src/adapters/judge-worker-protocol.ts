import type { CommandRequest, PolicyDecision } from '../decision.js';
import type { Loosening } from '../layers/merge-sandbox.js';
import type { PolicyErrorCode, PolicyIssue } from '../policy-file/policy-error.js';

/**
 * The messages between the judge (`WorkerThreadCommandJudge`, or
 * `ChildProcessCommandJudge`) and its worker (`judge-worker.ts`): posted to
 * a worker thread, or JSON-serialized over the `fork` channel.
 *
 * 1. parent → `init` (the policy text, its path, the managed layer's text and path when there is one, whether embedded tests must pass and examples be checked)
 * 2. worker → `ready` (the sha256 of each text it parsed, what the workspace asked beyond the managed layer, and the process and
 *    thread ids that judge, for the CPU clock) or `failed` (why; it then exits)
 * 3. parent → `judge` {id, request}, any number, not waiting for answers
 * 4. worker → `decision` {id, decision}, one per `judge`, in order
 */
export type ToWorker =
  | {
      readonly type: 'init';
      readonly policyPath: string;
      readonly policyText: string;
      /** The managed layer (`LayeredPolicyEngine`): judged with the workspace policy, the stricter decision wins. */
      readonly managed?: ManagedLayerText;
      readonly requirePassingTests: boolean;
      /** Check the rules' `examples` (refuse the policy when one fails). Default true. */
      readonly checkExamples?: boolean;
    }
  | { readonly type: 'judge'; readonly id: number; readonly request: CommandRequest };

export type FromWorker =
  | {
      readonly type: 'ready';
      readonly sha256: string;
      /** With a managed layer: the sha256 of its text, and what the workspace asked beyond it. */
      readonly managedSha256?: string;
      readonly loosenings?: readonly Loosening[];
      /** The process and Linux thread that judge (`/proc/<pid>/task/<tid>`); absent where procfs does not answer. */
      readonly pid?: number;
      readonly tid?: number;
    }
  | { readonly type: 'failed'; readonly error: WorkerStartError }
  | { readonly type: 'decision'; readonly id: number; readonly decision: PolicyDecision };

/** A start failure, flattened for JSON: a `PolicyError` keeps its code and issues. */
export type WorkerStartError =
  | {
      readonly kind: 'policy';
      readonly code: PolicyErrorCode;
      /** The message without the issue lines `PolicyError` appends. */
      readonly headline: string;
      readonly issues: readonly PolicyIssue[];
    }
  | { readonly kind: 'other'; readonly message: string };

/** A managed policy layer's exact text and the path that names it. */
export interface ManagedLayerText {
  readonly path: string;
  readonly text: string;
}
