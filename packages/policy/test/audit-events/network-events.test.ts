import { networkAllowedEvent, networkRefusedEvent } from '../../src/audit-events/events.js';

describe('proxy records', () => {
  it('a refusal by the allowlist names the terminal, the target and the rule', () => {
    expect(
      networkRefusedEvent({ host: 'evil.test', port: 443, method: 'CONNECT', terminalId: 't-1', count: 1 }),
    ).toEqual({
      event: {
        kind: 'event',
        category: ['network'],
        type: ['connection', 'denied'],
        action: 'network-refused',
        outcome: 'failure',
        reason: "evil.test is not in the sandbox's network allowlist",
      },
      destination: { domain: 'evil.test', port: 443 },
      http: { request: { method: 'CONNECT' } },
      termgate: { terminal_id: 't-1' },
      rule: { id: ['sandbox.network.allow'] },
    });
  });

  it('a refusal for a missing or forged credential names no terminal and says why', () => {
    const record = networkRefusedEvent({
      host: 'x.test',
      port: 80,
      method: 'GET',
      terminalId: null,
      reason: 'credential',
    });
    expect(record.rule).toEqual({ id: ['sandbox.network.credential'] });
    expect(record.termgate).toBeUndefined();
    expect((record.event as { reason: string }).reason).toMatch(/no valid proxy credential/);
  });

  it('a folded record counts the repeats of one terminal within the window', () => {
    const record = networkRefusedEvent({
      host: 'x.test',
      port: 80,
      method: 'GET',
      terminalId: 't-2',
      reason: 'connections',
      count: 7,
      windowMs: 10_000,
    });
    expect(record.termgate).toEqual({ terminal_id: 't-2', refusals: 7, window_ms: 10_000 });
    expect(record.rule).toEqual({ id: ['sandbox.network.connections'] });
  });

  it('an allowed connection names the terminal and the target', () => {
    const record = networkAllowedEvent({
      host: 'registry.npmjs.org',
      port: 443,
      method: 'CONNECT',
      terminalId: 't-3',
      count: 3,
      windowMs: 10_000,
    });
    expect(record.event).toMatchObject({
      action: 'network-allowed',
      outcome: 'success',
      type: ['connection', 'allowed'],
    });
    expect(record.destination).toEqual({ domain: 'registry.npmjs.org', port: 443 });
    expect(record.termgate).toEqual({ terminal_id: 't-3', connections: 3, window_ms: 10_000 });
  });
});
