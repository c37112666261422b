// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the test data is policy placeholders and shell syntax, not templates
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentCommandStart, parseAcpProxyArgs } from '../../src/acp-proxy/acp-proxy-config.js';
import { parseServeArgs } from '../../src/commands/serve.js';
import { wantsHelp } from '../../src/commands/usage.js';
import { writeGeneratedTrail } from '../e2e/support/generated-trail.js';
import { SERVER_BIN } from '../e2e/support/wire-server.js';

const DEFAULT_POLICY = join(import.meta.dirname, '..', '..', '..', '..', 'policies', 'default.yaml');

/** Runs the built `termgate` (packages/cli/dist/bin.js) with stdin at EOF. */
function termgate(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [SERVER_BIN, ...args], { input: '', encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Runs argv with stderr alone on a pseudo-terminal (stdout a pipe, stdin at EOF) by Python's pty module; prints what the terminal showed. */
const PTY_STDERR = [
  'import os, pty, subprocess, sys',
  'master, slave = pty.openpty()',
  'child = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave)',
  'os.close(slave)',
  'out = b""',
  'while True:',
  '    try:',
  '        chunk = os.read(master, 65536)',
  '    except OSError:',
  '        break',
  '    if not chunk:',
  '        break',
  '    out += chunk',
  'sys.stdout.buffer.write(out)',
  'sys.exit(child.wait())',
].join('\n');

const COMMANDS = [
  [],
  ['serve'],
  ['acp-proxy'],
  ['policy'],
  ['policy', 'check'],
  ['policy', 'test'],
  ['policy', 'explain'],
  ['audit'],
  ['audit', 'verify'],
  ['audit', 'show'],
  ['audit', 'report'],
  ['audit', 'keygen'],
  ['audit', 'export'],
];

describe('termgate -h/--help', () => {
  it.each(COMMANDS.flatMap((command) => [[command, '-h'] as const, [command, '--help'] as const]))(
    '%j %s prints its usage on stdout and exits 0',
    (command, flag) => {
      const { status, stdout, stderr } = termgate(...command, flag);
      expect(stderr).toBe('');
      expect(status).toBe(0);
      expect(stdout).toMatch(/^(termgate \S+: a policy-gated|Usage)/);
      // The usage names the command it is for.
      expect(stdout).toContain(`termgate ${command.join(' ')}`.trim());
    },
  );

  it('is found among other options (and a subcommand help is the group usage)', () => {
    expect(termgate('serve', '--policy', 'p.yaml', '--help').status).toBe(0);
    expect(termgate('audit', 'verify', 'trail.jsonl', '--json', '-h').stdout).toContain(
      'termgate audit verify',
    );
    expect(termgate('policy', 'explain', 'p.yaml', '--json', '--help').stdout).toContain(
      'termgate policy explain',
    );
  });

  it("is not read among the words after --, which are the command's or the agent's", () => {
    expect(wantsHelp(['p.yaml', '--', 'ls', '--help'])).toBe(false);
    const proxy = ['--policy', 'p.yaml', '--', 'agent', '--help'];
    expect(wantsHelp(proxy, agentCommandStart(proxy))).toBe(false);
    const bare = ['agent', '-h'];
    expect(wantsHelp(bare, agentCommandStart(bare))).toBe(false);
    const asked = ['--log-level', 'warn', '--help', '--', 'agent'];
    expect(wantsHelp(asked, agentCommandStart(asked))).toBe(true);
    // `policy explain FILE -- ls --help` judges `ls --help` (the file is missing: exit 1, not the usage).
    const explained = termgate('policy', 'explain', '/nonexistent/p.yaml', '--', 'ls', '--help');
    expect(explained.status).toBe(1);
    expect(explained.stdout).toBe('');
  });
});

describe('termgate usage errors', () => {
  it.each([
    [['nope'], 'termgate'],
    [['serve', '--bogus'], 'termgate serve'],
    [['serve', 'extra'], 'termgate serve'],
    [['serve', '--log-level', 'loud'], 'termgate serve'],
    [['serve', '--log-format', 'xml'], 'termgate serve'],
    [['acp-proxy', '--bogus', '--', 'agent'], 'termgate acp-proxy'],
    [['acp-proxy'], 'termgate acp-proxy'],
    [['policy'], 'termgate policy'],
    [['policy', 'frobnicate'], 'termgate policy'],
    [['policy', 'check'], 'termgate policy check'],
    [['policy', 'explain', 'p.yaml', '--bogus'], 'termgate policy explain'],
    [['audit'], 'termgate audit'],
    [['audit', 'verify'], 'termgate audit verify'],
    [['audit', 'verify', 'f', '--anchor'], 'termgate audit verify'],
    [['audit', 'show', 'f', '--decision', 'maybe'], 'termgate audit show'],
    [['audit', 'keygen'], 'termgate audit keygen'],
    [['audit', 'report', 'f'], 'termgate audit report'],
    [['audit', 'export'], 'termgate audit export'],
    [
      ['audit', 'export', 'f', '--otlp', 'http://127.0.0.1:9/v1/logs', '--redact-command', 'all'],
      'termgate audit export',
    ],
  ])('%j: exit 2, one "%s: MESSAGE" line and the --help hint on stderr, nothing on stdout', (argv, name) => {
    const { status, stdout, stderr } = termgate(...argv);
    expect(status).toBe(2);
    expect(stdout).toBe('');
    const escaped = name.replaceAll(' ', '\\s');
    expect(stderr).toMatch(new RegExp(`^${escaped}: [^\\n]+\\nRun "${escaped} --help" for usage\\.\\n$`));
  });

  it('an unknown option is named in our words, not the parser’s', () => {
    expect(termgate('serve', '--bogus').stderr.split('\n')[0]).toBe('termgate serve: unknown option --bogus');
    expect(termgate('serve', '--policy').stderr.split('\n')[0]).toBe(
      'termgate serve: --policy needs a value',
    );
  });

  it('no command at all prints the whole usage on stderr and exits 2', () => {
    const { status, stdout, stderr } = termgate();
    expect(status).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain('termgate serve');
  });
});

describe('termgate usage texts', () => {
  const optionsOf = (text: string): Set<string> => new Set(text.match(/--[a-z][a-z-]*/g) ?? []);

  it('the top-level usage lists every command and every option of every command', () => {
    const top = termgate('--help').stdout;
    for (const command of COMMANDS.filter((c) => c.length > 0)) {
      expect(top).toContain(`termgate ${command.join(' ')}`);
      for (const option of optionsOf(termgate(...command, '--help').stdout)) expect(top).toContain(option);
    }
    for (const option of ['--anchor', '--json', '--public-key', '--log-format', '--version'])
      expect(top).toContain(option);
  });

  it('serve and acp-proxy share their options, texts and defaults', () => {
    const options = (text: string): string => text.slice(text.indexOf('  --policy FILE'));
    const serve = termgate('serve', '--help').stdout;
    const proxy = termgate('acp-proxy', '--help').stdout;
    expect(options(proxy)).toBe(options(serve));
    expect(serve).toContain(
      '--log-level LEVEL  fatal, error, warn, info, debug, trace or silent (default: info)',
    );
    expect(serve).toMatch(/--shell PATH +bash for command lines \(default: bash on PATH\); must be bash/);
    const { agentCommand, ...proxyConfig } = parseAcpProxyArgs(['--', 'agent'], '/work');
    expect(agentCommand).toEqual(['agent']);
    expect(proxyConfig).toEqual(parseServeArgs([], '/work'));
    expect(proxyConfig).toMatchObject({ logLevel: 'info', logFormat: null });
  });
});

describe('termgate serve on stderr', () => {
  let dir: string;
  let policy: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'termgate-stderr-'));
    policy = join(dir, 'policy.yaml');
    writeFileSync(policy, 'default: allow\n');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** serve with stdin at EOF: it starts, stops at once, and prints the audit trail's head at start and stop. */
  const serve = (name: string, ...extra: string[]) =>
    termgate('serve', '--policy', policy, '--audit', join(dir, `${name}.jsonl`), ...extra);
  const anchor = /audit trail closed; head at stop: (\d+:[0-9a-f]{64})/;

  it('writes JSON lines only when stderr is not a terminal (the default), the stop anchor included', () => {
    const { status, stdout, stderr } = serve('json', '--log-level', 'warn');
    expect(status).toBe(0);
    expect(stdout).toBe('');
    const lines = stderr.trimEnd().split('\n');
    const records = lines.map((line) => JSON.parse(line) as { msg: string; auditHead?: string });
    const closed = records.find((r) => anchor.test(r.msg));
    expect(closed?.auditHead).toBe(anchor.exec(closed!.msg)![1]);
    expect(records.some((r) => /audit head at start: 1:/.test(r.msg))).toBe(true);
  });

  it('prints the audit anchor at every log level, silent included', () => {
    for (const level of ['error', 'silent']) {
      const { status, stderr } = serve(`level-${level}`, '--log-level', level);
      expect(status).toBe(0);
      expect(stderr).toMatch(anchor);
    }
  });

  it('writes human lines only with --log-format pretty, the anchor as "termgate: …"', () => {
    const { status, stderr } = serve('pretty', '--log-format', 'pretty');
    expect(status).toBe(0);
    const lines = stderr.trimEnd().split('\n');
    expect(lines.filter((line) => line.startsWith('{'))).toEqual([]);
    expect(lines).toContainEqual(expect.stringMatching(/^termgate: audit trail closed; head at stop: \d+:/));
    expect(lines).toContainEqual(expect.stringMatching(/INFO \(termgate\): serving MCP on stdio$/));
  });

  it('writes human lines by default when stderr is a terminal', () => {
    const script = PTY_STDERR;
    const result = spawnSync(
      'python3',
      [
        '-c',
        script,
        process.execPath,
        SERVER_BIN,
        'serve',
        '--policy',
        policy,
        '--audit',
        join(dir, 'tty.jsonl'),
      ],
      { encoding: 'utf8' },
    );
    expect(result.error).toBeUndefined();
    expect(result.status).toBe(0);
    const lines = result.stdout.replaceAll('\r', '').trimEnd().split('\n');
    expect(lines.filter((line) => line.startsWith('{'))).toEqual([]);
    expect(lines).toContainEqual(expect.stringMatching(/^termgate: audit trail closed; head at stop: \d+:/));
  });
});

describe('the first hour', () => {
  let home: string;
  beforeAll(() => {
    // Outside /tmp: the sandbox's private /tmp would hide it.
    home = mkdtempSync(join('/var/tmp', 'termgate-home-'));
    writeFileSync(join(home, '.npmrc'), '//registry.npmjs.org/:_authToken=x\n');
  });
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  const inHome = (...args: string[]) => {
    const result = spawnSync(process.execPath, [SERVER_BIN, ...args], {
      input: '',
      encoding: 'utf8',
      cwd: home,
      env: { ...process.env, HOME: home, XDG_STATE_HOME: join(home, '.state') },
    });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  };

  it('the shipped policy checks from the home directory (with a ~/.npmrc): its examples are judged in a synthetic workspace', () => {
    const { status, stdout, stderr } = inHome('policy', 'check', DEFAULT_POLICY);
    expect(stderr).not.toContain('notMatch example');
    expect(stdout).toMatch(/^ok: /);
    expect(status).toBe(0);
  });

  it('serve started in the home directory starts, and says the whole home is the workspace', () => {
    // The trail must lie outside every writable directory, and the whole home is one here.
    const trail = mkdtempSync(join('/var/tmp', 'termgate-home-trail-'));
    try {
      const { status, stderr } = inHome(
        'serve',
        '--audit',
        join(trail, 'audit.jsonl'),
        '--log-format',
        'pretty',
      );
      expect(stderr).not.toContain('refusing to start');
      expect(stderr).toContain('termgate: warning: started in the home directory: the workspace');
      expect(status).toBe(0);
    } finally {
      rmSync(trail, { recursive: true, force: true });
    }
  });

  it('serve in the home directory with the default trail (inside the home) refuses, naming --audit', () => {
    const { status, stderr } = inHome('serve', '--log-format', 'pretty');
    expect(stderr).toContain('termgate: warning: started in the home directory: the workspace');
    expect(stderr).toMatch(
      /refusing to start: the audit trail's directory .* lies inside the sandbox's writable directory/,
    );
    expect(stderr).toContain('give --audit a directory of its own');
    expect(status).toBe(1);
  });

  it('serve --version prints the version (and -v)', () => {
    for (const flag of ['--version', '-v']) {
      const { status, stdout, stderr } = termgate('serve', flag);
      expect({ status, stderr }).toEqual({ status: 0, stderr: '' });
      expect(stdout).toBe(termgate('--version').stdout);
      expect(stdout).toMatch(/^\d+\.\d+\.\d+/);
    }
  });

  it('--log-level warn keeps the informational notices off stderr; the two audit anchors remain', () => {
    const policy = join(home, 'allow.yaml');
    writeFileSync(policy, 'default: allow\n');
    const run = (...level: string[]) =>
      termgate('serve', '--policy', policy, '--audit', join(home, `quiet${level.length}.jsonl`), ...level)
        .stderr.trimEnd()
        .split('\n')
        .map((line) => (JSON.parse(line) as { msg: string }).msg);
    const quiet = run('--log-level', 'warn');
    expect(quiet).toHaveLength(2);
    expect(quiet[0]).toMatch(/^audit head at start: /);
    expect(quiet[1]).toMatch(/^audit trail closed; head at stop: /);
    // At the default level, the policy and sandbox notices are there.
    expect(run().some((msg) => msg.startsWith('policy '))).toBe(true);
  });

  it('NO_COLOR turns the colours of --log-format pretty off on a terminal', () => {
    const policy = join(home, 'allow.yaml');
    writeFileSync(policy, 'default: allow\n');
    const onTerminal = (env: NodeJS.ProcessEnv) =>
      spawnSync(
        'python3',
        [
          '-c',
          PTY_STDERR,
          process.execPath,
          SERVER_BIN,
          'serve',
          '--policy',
          policy,
          '--audit',
          join(home, 'c.jsonl'),
        ],
        { encoding: 'utf8', env },
      ).stdout;
    const { NO_COLOR: _, ...without } = process.env;
    // biome-ignore lint/suspicious/noControlCharactersInRegex: an ANSI colour sequence is the point.
    const colour = /\u001b\[[0-9;]*m/;
    expect(onTerminal(without)).toMatch(colour);
    const plain = onTerminal({ ...without, NO_COLOR: '1' });
    expect(plain).toContain('serving MCP on stdio');
    expect(plain).not.toMatch(colour);
  });

  it('audit show --json | head -1 ends quietly when the reader closes the pipe (no EPIPE, no stack)', () => {
    const trail = join(home, 'big.jsonl');
    // Far more than a pipe buffer, so that output is still being written when head has gone.
    writeGeneratedTrail(trail, 2000);
    for (const view of [['--json'], []]) {
      const result = spawnSync(
        'bash',
        [
          '-c',
          '"$@" | head -1; echo "rc=${PIPESTATUS[0]}" >&2',
          'bash',
          process.execPath,
          SERVER_BIN,
          'audit',
          'show',
          trail,
          ...view,
        ],
        { encoding: 'utf8' },
      );
      expect(result.stdout.split('\n').filter(Boolean)).toHaveLength(1);
      expect(result.stderr).toMatch(/^rc=(0|141)\n$/);
    }
  });
});
