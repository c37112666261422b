import type { SandboxProfile } from '../sandbox-profile.js';
import type { CallerContext, ResolvedTerminalSpec, TerminalId } from '../terminal-spec.js';
import type { ApprovalOutcome } from './approver.js';

export type GateVerb = 'create' | 'output' | 'wait' | 'kill' | 'release';

/** Everything the gate may judge. `spec` is the resolved spec the terminal was (or will be) spawned with. */
export interface GateRequest {
  readonly verb: GateVerb;
  readonly terminalId: TerminalId;
  readonly spec: ResolvedTerminalSpec;
  readonly caller: CallerContext;
}

export type GateDecision =
  | {
      readonly allow: true;
      readonly reason?: string;
      /**
       * The directory to spawn in, when the gate resolved it (for example with
       * realpath). The host uses it instead of `spec.cwd`, so that what was
       * judged is what runs.
       */
      readonly cwd?: string;
      /**
       * For `create`: the sandbox the command must run in. The host passes it
       * to the spawner unchanged; a spawner that cannot enforce it refuses.
       */
      readonly sandbox?: SandboxProfile;
    }
  | {
      readonly allow: false;
      readonly reason: string;
      readonly ruleIds?: readonly string[];
      /**
       * Set when the policy asked for approval and it was not given: how the
       * question ended. The host passes it on in `TermhostError.details.approval`,
       * so a protocol can tell a person's "no" from a rule's.
       */
      readonly approval?: ApprovalOutcome;
    };

/**
 * The host consults the gate before it spawns, and before every other verb.
 *
 * Contract:
 * - A refusal (or a thrown error, or a rejected promise) means the verb does
 *   not happen: nothing is spawned, nothing is killed. Errors never turn into
 *   "allowed".
 * - The gate is called once per verb, before any side effect of that verb.
 */
export interface Gate {
  decide(request: GateRequest): GateDecision | Promise<GateDecision>;
}

export const GATE: unique symbol = Symbol.for('termgate.Gate');
