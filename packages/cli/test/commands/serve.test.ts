import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { parseServeArgs, serveCommand, UsageError } from '../../src/commands/serve.js';

describe('parseServeArgs', () => {
  it('reads --managed-policy, resolved against the cwd', () => {
    expect(parseServeArgs(['--managed-policy', 'fleet/managed.yaml'], '/work').managedPolicyPath).toBe(
      '/work/fleet/managed.yaml',
    );
    expect(parseServeArgs([], '/work')).not.toHaveProperty('managedPolicyPath');
  });

  it('resolves relative paths against the cwd and defaults the rest', () => {
    expect(parseServeArgs(['--policy', 'p.yaml', '--audit', '/var/log/a.jsonl'], '/work')).toEqual({
      policyPath: '/work/p.yaml',
      auditPath: '/var/log/a.jsonl',
      auditFsync: false,
      shell: null,
      logLevel: 'info',
      logFormat: null,
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

async function serveWith(
  argv: string[],
  stdin: PassThrough = new PassThrough(),
): Promise<{ code: number; out: string; err: string }> {
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
  const code = await serveCommand(argv, { stdin, stdout, stderr });
  return { code, out, err };
}

/** Logs go to the real fd 2; keep the test output readable. */
const quiet = (...argv: string[]): string[] => [...argv, '--log-level', 'silent'];

describe('serveCommand', () => {
  it('exits 2 on bad arguments with one line and the --help hint, writing nothing to stdout', async () => {
    const { code, out, err } = await serveWith(['--log-level', 'nope']);
    expect(code).toBe(2);
    expect(out).toBe('');
    expect(err).toBe(
      'termgate serve: --log-level must be one of fatal, error, warn, info, debug, trace, silent\n' +
        'Run "termgate serve --help" for usage.\n',
    );
  });

  it('rejects an unknown --log-format', async () => {
    const { code, err } = await serveWith(['--log-format', 'xml']);
    expect(code).toBe(2);
    expect(err).toMatch(/^termgate serve: --log-format must be json or pretty\n/);
  });
});

describe('serveCommand fails closed', () => {
  it('refuses to start with an invalid policy, naming file, line and column', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'termgate-bad-policy-'));
    const policy = join(dir, 'policy.yaml');
    writeFileSync(policy, 'default: maybe\nrules: []\n');
    const { code, out, err } = await serveWith(quiet('--policy', policy, '--audit', join(dir, 'a.jsonl')));
    expect(code).toBe(1);
    expect(out).toBe('');
    expect(err).toContain('refusing to start');
    expect(err).toContain(`${policy}:1:`);
    expect(existsSync(join(dir, 'a.jsonl'))).toBe(false);
  });

  it('refuses to start with an unreadable policy or an unwritable audit trail', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'termgate-bad-audit-'));
    expect((await serveWith(quiet('--policy', join(dir, 'missing.yaml')))).code).toBe(1);
    writeFileSync(join(dir, 'file'), '');
    const unwritable = await serveWith(quiet('--audit', join(dir, 'file', 'audit.jsonl')));
    expect(unwritable.code).toBe(1);
    expect(unwritable.err).toContain('refusing to start');
  });

  it('refuses a --shell that is not bash', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'termgate-shell-'));
    const { code, err } = await serveWith(quiet('--shell', '/bin/sh', '--audit', join(dir, 'a.jsonl')));
    expect(code).toBe(1);
    expect(err).toContain('refusing to start');
  });
});

describe('serveCommand on a terminal', () => {
  it('tells a person at a TTY how to register the server, on stderr only', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'termgate-tty-'));
    const stdin = Object.assign(new PassThrough(), { isTTY: true });
    stdin.end();
    // Under jest the judge worker is not built next to the sources, so the
    // server stops right after its start (exit 1); the hint comes before that.
    const { out, err } = await serveWith(quiet('--audit', join(dir, 'a.jsonl')), stdin);
    expect(err).toContain('claude mcp add termgate --');
    expect(err).toContain('[mcp_servers.termgate]');
    expect(out).toBe('');
  });
});
