import { groupOf, readRecordGroups } from '@termgate/audit';

describe('record-schema: reading a record back', () => {
  test('reads each group of a record as written', () => {
    const groups = readRecordGroups({
      event: { action: 'terminal-create' },
      process: { command_line: 'ls' },
      rule: { id: ['r'] },
      host: { hostname: 'h' },
      destination: { domain: 'd', port: 1 },
      http: { request: { method: 'GET' } },
      termgate: { decision: 'allow', approval: { id: 'a' } },
    });
    expect(groups.event.action).toBe('terminal-create');
    expect(groups.process.command_line).toBe('ls');
    expect(groups.rule.id).toEqual(['r']);
    expect(groups.host.hostname).toBe('h');
    expect(groups.destination.port).toBe(1);
    expect(groups.http.request).toEqual({ method: 'GET' });
    expect(groups.termgate.decision).toBe('allow');
    expect(groupOf<{ id: string }>(groups.termgate.approval).id).toBe('a');
  });

  test.each([
    ['missing', undefined],
    ['null', null],
    ['a string', 'termgate'],
    ['a number', 7],
    ['an array', [{ decision: 'allow' }]],
  ])('a group that is %s reads as empty', (_name, value) => {
    expect(groupOf(value)).toEqual({});
    expect(readRecordGroups({ termgate: value, event: value }).termgate).toEqual({});
    expect(readRecordGroups({ termgate: value, event: value }).event).toEqual({});
  });
});
