import { PassThrough } from 'node:stream';
import { parseServeArgs, serveCommand, UsageError } from '../../src/commands/serve.js';

describe('parseServeArgs', () => {
  it('resolves relative paths against the cwd and defaults the rest', () => {
    expect(parseServeArgs(['--policy', 'p.yaml', '--audit', '/var/log/a.jsonl'], '/work')).toEqual({
      policyPath: '/work/p.yaml',
      auditPath: '/var/log/a.jsonl',
      shell: null,
      logLevel: 'info',
      cwd: '/work',
    });
  });

  it.each([[['--log-level', 'loud']], [['--policy']], [['--bogus']], [['extra']]])(
    'rejects %j with a usage error',
    (argv) => {
      expect(() => parseServeArgs(argv, '/')).toThrow(UsageError);
    },
  );
});

describe('serveCommand', () => {
  it('prints usage and exits 2 on bad arguments, writing nothing to stdout', async () => {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let out = '';
    let err = '';
    stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    stderr.on('data', (c: Buffer) => {
      err += c.toString();
    });
    const code = await serveCommand(['--log-level', 'nope'], { stdin: new PassThrough(), stdout, stderr });
    expect(code).toBe(2);
    expect(out).toBe('');
    expect(err).toContain('Usage: termgate serve');
  });
});
