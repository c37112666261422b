import type { Gate, GateDecision, GateRequest } from '../../src/ports/gate.js';

/** A gate that records every request and answers with `policy` (allow all by default). */
export class RecordingGate implements Gate {
  readonly requests: GateRequest[] = [];

  constructor(
    private readonly policy: (request: GateRequest) => GateDecision | Promise<GateDecision> = allow,
  ) {}

  decide(request: GateRequest): GateDecision | Promise<GateDecision> {
    this.requests.push(request);
    return this.policy(request);
  }

  verbs(): string[] {
    return this.requests.map((r) => r.verb);
  }
}

function allow(): GateDecision {
  return { allow: true };
}
