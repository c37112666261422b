import { AllowAllGate } from '../../../../test-support/terminal-doubles.js';
import type { Gate, GateVerb } from '../../src/ports/gate.js';

describe('AllowAllGate', () => {
  it('allows every verb, whatever the command', async () => {
    const gate: Gate = new AllowAllGate();
    const spec = {
      command: 'rm -rf /',
      args: null,
      cwd: '/',
      env: {},
      outputByteLimit: 0,
      argv: ['bash', '-c'],
    };
    const verbs: GateVerb[] = ['create', 'output', 'wait', 'kill', 'release'];
    for (const verb of verbs) {
      const decision = await gate.decide({ verb, terminalId: 't', spec, caller: {} });
      expect(decision.allow).toBe(true);
    }
  });
});
