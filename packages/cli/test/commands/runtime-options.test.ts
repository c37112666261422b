import { parseAcpProxyArgs } from '../../src/acp-proxy/acp-proxy-config.js';
import { parseServeArgs } from '../../src/commands/serve.js';
import { durationMs } from '../../src/duration.js';

describe('serve and acp-proxy read their shared options alike (node:util parseArgs)', () => {
  it.each([
    [['--bogus'], 'unknown option --bogus'],
    [['--bogus=1'], 'unknown option --bogus'],
    [['--policy'], '--policy needs a value'],
    [
      ['--policy', '--audit', 'x.jsonl'],
      '--policy needs a value (one that starts with - is written --policy=VALUE)',
    ],
  ])('%j: %s', (argv, message) => {
    expect(() => parseServeArgs(argv, '/work')).toThrow(message);
    expect(() => parseAcpProxyArgs([...argv, '--', 'agent'], '/work')).toThrow(message);
  });

  it('acp-proxy stops reading options at the agent command, with or without --', () => {
    const options = ['--policy=p.yaml', '--audit-fsync', '--log-level', 'warn'];
    for (const agent of [
      ['--', 'agent', '--policy', 'theirs'],
      ['agent', '--policy', 'theirs'],
    ]) {
      expect(parseAcpProxyArgs([...options, ...agent], '/work')).toMatchObject({
        policyPath: '/work/p.yaml',
        auditFsync: true,
        logLevel: 'warn',
        agentCommand: ['agent', '--policy', 'theirs'],
      });
    }
    expect(() => parseAcpProxyArgs(['--policy=', '--', 'agent'], '/work')).toThrow('--policy needs a value');
    expect(() => parseAcpProxyArgs(['-', '--', 'agent'], '/work')).toThrow('unknown option -');
    expect(() => parseAcpProxyArgs(['--policy', 'p.yaml'], '/work')).toThrow('no agent command');
  });
});

describe('durationMs, the one duration syntax', () => {
  it.each([
    ['90s', 90_000],
    ['15m', 900_000],
    ['1h30m', 5_400_000],
    ['2d', 172_800_000],
    ['250ms', 250],
    ['0s', 0],
  ])('%s is %d ms', (text, ms) => {
    expect(durationMs(text)).toBe(ms);
  });

  it.each(['', '90', '1.5h', '1H', ' 1h', '1h ', '-1h', '1w'])('%j is not a duration', (text) => {
    expect(durationMs(text)).toBeNull();
  });
});
