import { parseAcpProxyArgs } from '../../src/acp-proxy/acp-proxy-config.js';
import { parseServeArgs, UsageError } from '../../src/commands/serve.js';

describe('audit trail options of serve and acp-proxy', () => {
  const argv = [
    '--audit-rotate-size',
    '100M',
    '--audit-rotate-age',
    '1d',
    '--audit-signing-key',
    'keys/audit',
    '--audit-checkpoint-every',
    '500',
    '--audit-checkpoint-interval',
    '30s',
  ];
  const expected = {
    auditRotation: { maxBytes: 100 * 1024 * 1024, maxAgeMs: 86_400_000 },
    auditSigningKeyPath: '/work/keys/audit',
    auditCheckpoint: { everyRecords: 500, everyMs: 30_000 },
  };

  test('serve parses sizes, durations and resolves the key path against the cwd', () => {
    expect(parseServeArgs(argv, '/work')).toMatchObject(expected);
  });

  test('acp-proxy parses the same options before the agent command', () => {
    expect(parseAcpProxyArgs([...argv, '--', 'agent', '--audit-rotate-size', 'x'], '/work')).toMatchObject({
      ...expected,
      agentCommand: ['agent', '--audit-rotate-size', 'x'],
    });
  });

  test.each([
    [['--audit-rotate-size', '0']],
    [['--audit-rotate-size', '10X']],
    [['--audit-rotate-age', '1w']],
    [['--audit-checkpoint-interval', '5s']],
    [['--audit-signing-key', 'k', '--audit-checkpoint-every', '-1']],
  ])('rejects %j', (bad) => {
    expect(() => parseServeArgs(bad, '/')).toThrow(UsageError);
    expect(() => parseAcpProxyArgs([...bad, '--', 'agent'], '/')).toThrow(/audit/);
  });
});
