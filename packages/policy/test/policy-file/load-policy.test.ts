import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_POLICY_PATH, loadPolicyFile, PolicyError, parsePolicyText } from '@termgate/policy';

function invalid(text: string): PolicyError {
  try {
    parsePolicyText(text, '/p/policy.yaml');
  } catch (error) {
    expect(error).toBeInstanceOf(PolicyError);
    expect((error as PolicyError).code).toBe('POLICY_INVALID');
    return error as PolicyError;
  }
  throw new Error('expected the policy to be refused');
}

describe('parsePolicyText', () => {
  test('accepts a minimal policy and hashes its bytes', () => {
    const policy = parsePolicyText('default: deny\n', '/p/policy.yaml');
    expect(policy.default).toBe('deny');
    expect(policy.rules).toEqual([]);
    expect(policy.cwdRoots).toBeNull();
    expect(policy.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  test('limits.maxOutputChars is an integer of at least 1000, carried as given', () => {
    const policy = parsePolicyText('default: deny\nlimits: { maxOutputChars: 50000 }\n', '/p/policy.yaml');
    expect(policy.limits.maxOutputChars).toBe(50_000);
    expect(invalid('default: deny\nlimits: { maxOutputChars: 999 }\n').issues[0]).toMatchObject({
      key: 'limits.maxOutputChars',
    });
    expect(invalid('default: deny\nlimits: { maxOutputChars: 1.5 }\n').issues[0]).toMatchObject({
      key: 'limits.maxOutputChars',
    });
  });

  test('bad YAML names the file, line and column', () => {
    const error = invalid('default: deny\nrules: [\n');
    expect(error.issues[0]).toMatchObject({ file: '/p/policy.yaml', line: expect.any(Number) });
    expect(error.message).toMatch(/^invalid policy file/);
  });

  test('a schema violation names the key and its position', () => {
    const error = invalid('default: deny\nrules:\n  - id: a\n    decision: maybe\n    program: ls\n');
    expect(error.issues).toEqual([
      expect.objectContaining({
        line: 4,
        column: 15,
        key: 'rules[0].decision',
        message: 'must be one of: allow, deny, ask',
      }),
    ]);
  });

  test('an unknown key is refused at the key itself', () => {
    const error = invalid('default: deny\nrules:\n  - id: a\n    decision: deny\n    progam: rm\n');
    expect(error.issues[0]).toMatchObject({ line: 5, column: 5, key: 'rules[0].progam' });
    expect(error.issues[0]!.message).toMatch(/unknown key "progam"/);
  });

  test('`default` is required', () => {
    expect(invalid('rules: []\n').issues[0]!.message).toBe('missing required key "default"');
  });

  test('duplicate rule ids are refused at the second one', () => {
    const error = invalid(
      'default: deny\nrules:\n  - { id: a, decision: deny, program: rm }\n  - { id: a, decision: allow, program: ls }\n',
    );
    expect(error.issues[0]).toMatchObject({ line: 4, key: 'rules[1].id' });
    expect(error.issues[0]!.message).toMatch(/duplicate rule id "a"/);
  });

  test('an invalid regex is refused with its position', () => {
    const error = invalid(
      'default: deny\nrules:\n  - id: a\n    decision: deny\n    regex: ["ok", "(unclosed"]\n',
    );
    expect(error.issues[0]).toMatchObject({ line: 5, key: 'rules[0].regex[1]' });
    expect(error.issues[0]!.message).toMatch(/invalid regex/);
  });

  test('a rule without matchers and a test naming an unknown rule are refused', () => {
    const error = invalid(
      'default: deny\nrules:\n  - { id: a, decision: deny }\ntests:\n  - { command: ls, expect: deny, rule: b }\n',
    );
    expect(error.issues.map((i) => i.key)).toEqual(['rules[0]', 'tests[0].rule']);
  });

  test('a $schema key is allowed for editors', () => {
    expect(parsePolicyText('$schema: ./policy.schema.json\ndefault: allow\n', '/p/x.yaml').default).toBe(
      'allow',
    );
  });

  test('relative cwd roots are relative to the policy file', () => {
    const policy = parsePolicyText('default: allow\ncwd: { roots: [work] }\n', '/nonexistent/dir/p.yaml');
    expect(policy.cwdRoots).toEqual(['/nonexistent/dir/work']);
  });

  test('inheritedEnv keeps inherited names and never the deny floor', () => {
    const policy = parsePolicyText("default: allow\nenv: { inherit: [PATH, 'LC_*', 'LD_*'] }\n", '/p/x.yaml');
    expect(policy.inheritedEnv({ PATH: '/bin', LC_ALL: 'C', LD_PRELOAD: 'x', GH_TOKEN: 's' })).toEqual({
      PATH: '/bin',
      LC_ALL: 'C',
    });
  });
});

describe('writes', () => {
  test('is optional: without it (or its default), writes follow the policy default', () => {
    expect(parsePolicyText('default: deny\n', '/p/policy.yaml').writes).toEqual({
      default: 'deny',
      allow: [],
      deny: [],
    });
    expect(parsePolicyText('default: allow\n', '/p/policy.yaml').writes.default).toBe('allow');
    expect(
      parsePolicyText("default: deny\nwrites: { allow: ['/tmp/**'] }\n", '/p/p.yaml').writes.default,
    ).toBe('deny');
    expect(parsePolicyText('default: deny\nwrites: { default: allow }\n', '/p/p.yaml').writes.default).toBe(
      'allow',
    );
  });

  test('compiles patterns with pseudo rule ids and positions', () => {
    const policy = parsePolicyText(
      "default: deny\nwrites:\n  default: deny\n  allow: ['/dev/null']\n  deny:\n    - '**/.git/**'\n",
      '/p/policy.yaml',
    );
    expect(policy.writes.default).toBe('deny');
    expect(policy.writes.deny[0]).toMatchObject({
      id: 'writes.deny[0]',
      pattern: '**/.git/**',
      position: { line: 6, column: 7 },
    });
    expect(policy.writes.allow[0]!.matchers.some((m) => m.test('/dev/null'))).toBe(true);
  });

  test.each([
    ['writes:\n  defualt: deny\n', 'writes.defualt', /unknown key "defualt"/, 3],
    ['writes:\n  default: maybe\n', 'writes.default', /must be one of: allow, deny/, 3],
    ['writes:\n  deny: ["ok/*", "/x"]\n', 'writes.deny[0]', /must be absolute/, 3],
    ['writes:\n  allow: [""]\n', 'writes.allow[0]', /must NOT have fewer than 1 characters/, 3],
    ['writes: []\n', 'writes', /must be object/, 2],
  ])('refuses %j', (body, key, message, line) => {
    const error = invalid(`default: deny\n${body}`);
    expect(error.issues[0]).toMatchObject({ key, line });
    expect(error.issues[0]!.message).toMatch(message);
  });

  test('tests may name writes pseudo rule ids that exist', () => {
    const base = "default: allow\nwrites:\n  deny: ['**/.git/**']\ntests:\n";
    expect(() =>
      parsePolicyText(
        `${base}  - { command: 'ls > .git/x', expect: deny, rule: 'writes.deny[0]' }\n`,
        '/p/p.yaml',
      ),
    ).not.toThrow();
    expect(
      invalid(`${base}  - { command: 'ls', expect: deny, rule: 'writes.deny[1]' }\n`).issues[0],
    ).toMatchObject({
      key: 'tests[0].rule',
    });
  });
});

describe('loadPolicyFile', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'termgate-policy-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test('an unreadable file is POLICY_UNREADABLE', async () => {
    await expect(loadPolicyFile(join(dir, 'missing.yaml'))).rejects.toMatchObject({
      code: 'POLICY_UNREADABLE',
      message: expect.stringContaining('ENOENT'),
    });
    if (process.getuid?.() !== 0) {
      const file = join(dir, 'locked.yaml');
      writeFileSync(file, 'default: deny\n');
      chmodSync(file, 0);
      await expect(loadPolicyFile(file)).rejects.toMatchObject({ code: 'POLICY_UNREADABLE' });
    }
  });

  test('the shipped default policy loads', async () => {
    const policy = await loadPolicyFile(DEFAULT_POLICY_PATH);
    expect(policy.default).toBe('allow');
    expect(policy.tests.length).toBeGreaterThan(10);
  });
});
