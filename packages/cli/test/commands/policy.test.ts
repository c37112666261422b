// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the test data is policy placeholders and shell syntax, not templates
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { policyCommand } from '../../src/commands/policy.js';

const REPO = resolve(import.meta.dirname, '..', '..', '..', '..');
const STRICT = join(REPO, 'examples', 'strict-enterprise.yaml');
const DEFAULT = join(REPO, 'policies', 'default.yaml');

async function run(
  argv: string[],
  stdin = '',
  env: Record<string, string> = {},
): Promise<{ code: number; out: string; err: string }> {
  const io = { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() };
  let out = '';
  let err = '';
  io.stdout.on('data', (c: Buffer) => {
    out += c.toString();
  });
  io.stderr.on('data', (c: Buffer) => {
    err += c.toString();
  });
  io.stdin.end(stdin);
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    const code = await policyCommand(argv, io);
    return { code, out, err };
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'termgate-cli-policy-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('check: ok summary for the shipped policies', async () => {
  for (const file of [DEFAULT, STRICT]) {
    const r = await run(['check', file]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(
      /^ok: .*: default (allow|deny), \d+ rule\(s\), \d+ test\(s\) passed, sha256 [0-9a-f]{64}\nsandbox: .*\n$/,
    );
    // The only footgun left: this checkout is the cwd root, and the shipped files are in it.
    expect(r.err).toBe(
      `warning: ${file}: the policy file ${file} is inside the cwd root ${REPO}: a command can rewrite it [writable-policy-file]\n`,
    );
  }
});

test('check: a flat argvPrefix is refused with the two intended forms', async () => {
  const file = join(dir, 'flat.yaml');
  writeFileSync(
    file,
    'default: deny\nrules:\n  - { id: git, decision: allow, program: git, argvPrefix: [status, log] }\n',
  );
  const r = await run(['check', file]);
  expect(r.code).toBe(1);
  expect(r.err).toContain(`${file}:3:`);
  expect(r.err).toContain('rules[0].argvPrefix: argvPrefix must be a list of lists of words');
  expect(r.err).toContain('`argvPrefix: [[status], [log], [diff]]`');
  expect(r.err).toContain('`argvPrefix: [[commit, -m]]`');
});

test('check: a rule whose match:/notMatch: example fails makes the policy invalid', async () => {
  const file = join(dir, 'examples.yaml');
  writeFileSync(
    file,
    'default: deny\nrules:\n  - id: git-read\n    decision: allow\n    program: git\n    argvPrefix: [[status]]\n' +
      "    match: ['git status', 'git log']\n    notMatch: ['git status --short']\n",
  );
  const r = await run(['check', file]);
  expect(r.code).toBe(1);
  expect(r.err).toContain('rules[0].match: rule "git-read" does not match its match example "git log"');
  expect(r.err).toContain(
    'rules[0].notMatch: rule "git-read" matches its notMatch example "git status --short"',
  );
  expect(r.err).not.toContain('"git status"');
});

test('check, test and explain: argvPrefix matches whole tokens (`run test` is not `run test-and-publish`)', async () => {
  const file = join(dir, 'prefix.yaml');
  writeFileSync(
    file,
    'default: allow\nrules:\n  - id: no-npm-run-test\n    decision: deny\n    program: npm\n    argvPrefix: [[run, test]]\n' +
      "    match: ['npm run test', 'npm run test --watch']\n    notMatch: ['npm run test-and-publish', 'npm run']\n" +
      'tests:\n' +
      "  - { command: 'npm run test', expect: deny, rule: no-npm-run-test }\n" +
      "  - { command: 'npm run test-and-publish', expect: allow }\n",
  );
  const check = await run(['check', file]);
  expect(check.err).not.toContain('no-npm-run-test');
  expect(check.code).toBe(0);
  const tested = await run(['test', file]);
  expect(tested.code).toBe(0);
  expect(tested.out).toMatch(/PASS.*npm run test-and-publish/);
  const explained = await run(['explain', file, '--json', '--', 'npm run test-and-publish']);
  expect(JSON.parse(explained.out)).toMatchObject({ decision: 'allow', ruleIds: [] });
  const denied = await run(['explain', file, '--json', '--', 'npm run test']);
  expect(JSON.parse(denied.out)).toMatchObject({ decision: 'deny', ruleIds: ['no-npm-run-test'] });
});

test('check: warns about footguns without refusing the policy', async () => {
  const file = join(dir, 'footguns.yaml');
  writeFileSync(
    file,
    `default: allow\ncwd: { roots: ['${dir}'] }\nenv: { deny: [http_proxy, 'npm_config_*'] }\nrules:\n  - { id: no-sudo, decision: deny, program: sudo }\n`,
  );
  const r = await run(['check', file]);
  expect(r.code).toBe(0);
  expect(r.err).toContain('no rule names an interpreter');
  expect(r.err).toContain('[interpreters-unruled]');
  expect(r.err).toContain('env.deny `http_proxy` is case-sensitive and misses `HTTP_PROXY`');
  expect(r.err).not.toContain('npm_config_*` is case-sensitive');
  expect(r.err).toContain(`the policy file ${file} is inside the cwd root ${dir}`);
});

test('check: errors name file:line:col and the key', async () => {
  const file = join(dir, 'bad.yaml');
  writeFileSync(file, 'default: deny\nrules:\n  - id: a\n    decision: nope\n    program: ls\n');
  const r = await run(['check', file]);
  expect(r.code).toBe(1);
  expect(r.err).toContain(`${file}:4:15: rules[0].decision: must be one of: allow, deny`);
  expect((await run(['check', join(dir, 'missing.yaml')])).err).toMatch(/cannot read policy file .*ENOENT/);
});

test('test: PASS per test, non-zero on a failure', async () => {
  const ok = await run(['test', STRICT]);
  expect(ok.code).toBe(0);
  expect(ok.out).toMatch(/^PASS .*strict-enterprise\.yaml:\d+:\d+ "git status" → allow$/m);
  expect(ok.out).toMatch(/\d+ passed, 0 failed\n$/);
  const file = join(dir, 'failing.yaml');
  writeFileSync(
    file,
    'default: deny\ntests:\n  - { command: ls, expect: allow }\n  - { command: ls, expect: deny }\n',
  );
  const bad = await run(['test', file]);
  expect(bad.code).toBe(1);
  expect(bad.out).toContain(`FAIL ${file}:3:5 "ls": expected allow, got deny`);
  expect(bad.out).toContain('1 passed, 1 failed');
});

test('explain: text shows the decision, rule ids and sub-commands', async () => {
  const r = await run(['explain', STRICT, '--', 'git status && bash -c "rm x"']);
  expect(r.code).toBe(1);
  expect(r.out).toMatch(/^decision: deny$/m);
  expect(r.out).toMatch(/deny {2}\["rm","x"\] {2}\[via bash -c\] {2}← default/);
  expect(r.out).toMatch(/allow \["git","status"\] {2}← git-read-only \(line \d+\)/);
});

test('explain: text lists the output redirections of each command, literal or dynamic', async () => {
  const r = await run(['explain', STRICT, '--', 'git status > out.txt 2>&1; git log >> "$LOG"']);
  expect(r.out).toMatch(/\["git","status"\].*\n {8}writes > "out\.txt"$/m);
  expect(r.out).toMatch(/\["git","log"\].*\n {8}writes >> "\$LOG" \(dynamic\)$/m);
  expect(r.out).not.toMatch(/writes .*2>&1/);
});

test('explain --json: one object; --argv judges argv without a shell', async () => {
  const r = await run(['explain', STRICT, '--json', '--', 'git status']);
  expect(r.code).toBe(0);
  expect(JSON.parse(r.out)).toMatchObject({ decision: 'allow', ruleIds: ['git-read-only'], problems: [] });
  const argv = await run(['explain', STRICT, '--json', '--argv', '--', 'git', 'log', '$(rm x); rm x']);
  expect(JSON.parse(argv.out)).toMatchObject({
    decision: 'allow',
    subcommands: [{ argv: ['git', 'log', '$(rm x); rm x'] }],
  });
  const env = await run(['explain', STRICT, '--json', '--env', 'GIT_DIR=/x', '--', 'ls']);
  expect(JSON.parse(env.out).reason).toMatch(/GIT_DIR/);
});

test('explain --json with no command: JSON Lines in, one decision per line out, errors per line', async () => {
  const input = [
    JSON.stringify({ command: 'ls' }),
    'not json',
    JSON.stringify({ command: 'git', args: ['push'] }),
    JSON.stringify({ command: 5 }),
    JSON.stringify({ command: 'ls', cwd: '/' }),
  ].join('\n');
  const r = await run(['explain', STRICT, '--json'], `${input}\n`);
  expect(r.code).toBe(0);
  const out = r.out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  expect(out).toEqual([
    expect.objectContaining({ decision: 'allow' }),
    { line: 2, error: expect.any(String) },
    expect.objectContaining({ decision: 'deny' }),
    { line: 4, error: '"command" must be a string' },
    expect.objectContaining({ decision: 'deny', reason: expect.stringMatching(/outside the allowed roots/) }),
  ]);
});

test('usage errors exit 2', async () => {
  expect((await run([])).code).toBe(2);
  expect((await run(['frobnicate'])).code).toBe(2);
  expect((await run(['check'])).code).toBe(2);
  expect((await run(['explain', STRICT])).code).toBe(2);
  expect((await run(['check', STRICT, '--bogus'])).err).toBe(
    'termgate policy check: unknown option --bogus\nRun "termgate policy check --help" for usage.\n',
  );
  expect((await run(['frobnicate'])).err).toBe(
    'termgate policy: unknown subcommand "frobnicate"\nRun "termgate policy --help" for usage.\n',
  );
});

describe('policy explain with a sandbox', () => {
  test('prints the effective profile of an allowed line, and its sha256 in --json', async () => {
    const { mkdtempSync, mkdirSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'termgate-explain-'));
    mkdirSync(join(dir, 'ws', '.git', 'hooks'), { recursive: true });
    writeFileSync(join(dir, 'ws', '.git', 'config'), '');
    const file = join(dir, 'p.yaml');
    writeFileSync(
      file,
      `default: allow\nsandbox:\n  mode: required\n  filesystem: { writable: ['${join(dir, 'ws')}'], hidden: ['${dir}'] }\n  network: { allow: [example.org] }\n`,
    );
    const { execFileSync } = await import('node:child_process');
    const bin = join(import.meta.dirname, '../../dist/bin.js');
    const text = execFileSync(
      process.execPath,
      [bin, 'policy', 'explain', file, '--cwd', join(dir, 'ws'), '--', 'make'],
      {
        encoding: 'utf8',
      },
    );
    expect(text).toMatch(/^sandbox: {2}required \(profile sha256 [0-9a-f]{64}\)$/m);
    expect(text).toContain(`read-only: ${join(dir, 'ws', '.git')} (`);
    expect(text).toMatch(/network: {3}allowlist, through the proxy: example\.org$/m);
    const json = JSON.parse(
      execFileSync(
        process.execPath,
        [bin, 'policy', 'explain', file, '--json', '--cwd', join(dir, 'ws'), '--', 'make'],
        {
          encoding: 'utf8',
        },
      ),
    ) as {
      sandbox: { sha256: string; profile: { network: string; filesystem: { hiddenDirectories: string[] } } };
    };
    expect(json.sandbox.profile.network).toBe('proxy');
    expect(json.sandbox.profile.filesystem.hiddenDirectories).toContain(dir);
    expect(json.sandbox.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  test('prints the allowlisted view: the emptied trees, what shows through them, the placeholders', async () => {
    const { mkdtempSync, mkdirSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join('/var/tmp', 'termgate-explain-'));
    const home = join(dir, 'home');
    mkdirSync(join(home, '.nvm'), { recursive: true });
    writeFileSync(join(home, '.gitconfig'), '');
    mkdirSync(join(dir, 'ws'));
    writeFileSync(join(dir, 'ws', 'package.json'), '{}');
    const file = join(dir, 'p.yaml');
    writeFileSync(
      file,
      `default: allow\nsandbox:\n  mode: required\n  filesystem: { writable: ['${join(dir, 'ws')}'], readable: ['~/.gitconfig', '~/.nvm', '~/.absent'], readOnly: ['${join(dir, 'ws')}/.envrc'] }\n`,
    );
    const r = await run(['explain', file, '--cwd', join(dir, 'ws'), '--', 'make'], '', { HOME: home });
    expect(r.out).toMatch(new RegExp(`^ {2}emptied: {3}${home}, /root, /run \\(`, 'm'));
    expect(r.out).toContain(`  readable:  ${join(home, '.gitconfig')}, ${join(home, '.nvm')}\n`);
    expect(r.out).toContain(`${join(dir, 'ws', '.envrc')}`);
    expect(r.out).toContain(`${join(dir, 'ws', '.npmrc')}`);
    rmSync(dir, { recursive: true, force: true });
  });
});

test('check warns about a readable or writable path that holds a known credential file or socket place', async () => {
  const { mkdtempSync, writeFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  const dir = mkdtempSync(join('/var/tmp', 'termgate-check-'));
  const file = join(dir, 'p.yaml');
  writeFileSync(
    file,
    "default: deny\nsandbox:\n  mode: required\n  filesystem: { writable: ['~/.cache'], readable: ['~/.cargo', '~/.config/git'], hidden: ['~/.config/git/credentials'] }\n",
  );
  const r = await run(['check', file], '', { HOME: join(dir, 'h') });
  expect(r.code).toBe(0);
  expect(r.err).toContain(
    `readable path ${join(dir, 'h', '.cargo')} holds known credential files (~/.cargo/credentials, ~/.cargo/credentials.toml)`,
  );
  expect(r.err).toContain(
    `writable path ${join(dir, 'h', '.cache')} holds credential daemons' socket places (~/.cache/git/credential)`,
  );
  // A hidden path covers what it hides.
  expect(r.err).not.toContain('~/.config/git/credentials');
  rmSync(dir, { recursive: true, force: true });
});

test('explain: an ask line exits 3 and names the ask rule; the shipped default asks before git push', async () => {
  const r = await run(['explain', DEFAULT, '--cwd', REPO, '--', 'git push origin main']);
  expect(r.code).toBe(3);
  expect(r.out).toMatch(/^decision: ask\nrules: {4}ask-git-push\n/);
  expect(r.out).toContain('sandbox:  required');
  const forced = await run(['explain', DEFAULT, '--cwd', REPO, '--', 'git push --force origin main']);
  expect(forced.code).toBe(1);
  expect(forced.out).toMatch(/^decision: deny\n/);
});

test('check runs the embedded tests: one that fails fails the check (exit 1, the test named with line:col)', async () => {
  const file = join(dir, 'failing-test.yaml');
  writeFileSync(
    file,
    'default: deny\nrules:\n  - { id: ls, decision: allow, program: ls }\ntests:\n  - { command: ls, expect: allow }\n' +
      '  - { command: rm -rf build, expect: allow }\n',
  );
  const r = await run(['check', file]);
  expect(r.code).toBe(1);
  expect(r.out).toBe('');
  expect(r.err).toContain(`${file}:6:5: "rm -rf build": expected allow, got deny`);
  expect(r.err).toContain('1 of 2 embedded test(s) failed');
});

test('check and explain name the hosts of the network allowlist', async () => {
  const file = join(dir, 'allowlist.yaml');
  writeFileSync(
    file,
    "default: allow\nsandbox:\n  mode: required\n  network: { allow: [registry.npmjs.org, '*.githubusercontent.com'] }\n",
  );
  const r = await run(['check', file]);
  expect(r.code).toBe(0);
  expect(r.out).toContain(
    'sandbox: required; network: allowlist, through the proxy: registry.npmjs.org, *.githubusercontent.com\n',
  );
  const off = await run(['check', join(dir, 'failing-test.yaml').replace('failing-test', 'flat')]);
  expect(off.out).not.toContain('allowlist');
});

describe('a malformed glob is a load error with line:col', () => {
  test.each([
    [
      'a rule path',
      "rules:\n  - id: keys\n    decision: deny\n    path: ['~/.ssh/[id', '/etc/(shadow']\n",
      ['5:12', '5:26'],
    ],
    [
      'a ${SERVER_CWD} path',
      "rules:\n  - id: src\n    decision: deny\n    path: '${SERVER_CWD}/src/[abc'\n",
      ['5:11'],
    ],
    ['a brace', "rules:\n  - id: tmp\n    decision: deny\n    path: ['/tmp/**/{a,b']\n", ['5:12']],
    ['a write pattern', "writes:\n  deny: ['/etc/{passwd']\n", ['3:10']],
  ])('%s', async (_name, body, positions) => {
    const file = join(dir, `malformed-${positions[0]!.replace(':', '-')}-${body.length}.yaml`);
    writeFileSync(file, `default: allow\n${body}`);
    const r = await run(['check', file]);
    expect(r.code).toBe(1);
    for (const at of positions) expect(r.err).toMatch(new RegExp(`${file}:${at}: .*is malformed: unclosed`));
  });

  test('a balanced pattern with classes, braces and extglobs still loads', async () => {
    const file = join(dir, 'balanced.yaml');
    writeFileSync(
      file,
      "default: allow\nrules:\n  - id: k\n    decision: deny\n    path: ['**/.ssh/id_!(*.pub)', '/{bin,usr}/**', '/x/[]a]', '/y/\\[']\n",
    );
    const r = await run(['check', file]);
    expect(r.err).not.toContain('malformed');
    expect(r.code).toBe(0);
  });
});
