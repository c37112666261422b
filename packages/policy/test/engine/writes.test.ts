// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the test data is policy placeholders, not templates
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type CommandRequest,
  createPolicyEngine,
  type PolicyEngine,
  parsePolicyText,
} from '@termgate/policy';

let root: string;
let work: string;
let outside: string;

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'termgate-writes-')));
  work = join(root, 'work');
  outside = join(root, 'outside');
  mkdirSync(join(work, '.git'), { recursive: true });
  mkdirSync(join(work, 'src'));
  mkdirSync(outside);
  symlinkSync(outside, join(work, 'escape'));
  symlinkSync(join(work, '.git', 'config'), join(work, 'innocent'));
  symlinkSync(join(outside, 'dangling-target'), join(work, 'dangling'));
  writeFileSync(join(work, 'README.md'), 'x\n');
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

async function engineFor(writes: string, extra = ''): Promise<PolicyEngine> {
  const text = `default: allow\n${extra}writes:\n${writes}`;
  return createPolicyEngine(parsePolicyText(text, join(work, 'p.yaml')));
}

function line(command: string, extra: Partial<CommandRequest> = {}): CommandRequest {
  return { command, args: null, cwd: work, env: {}, ...extra };
}

describe('strict writes (default deny)', () => {
  let engine: PolicyEngine;
  beforeAll(async () => {
    engine = await engineFor(
      `  default: deny\n  allow: ['${work}/**', '/dev/null']\n` +
        `  deny: ['**/.git/**', '**/.git', '**/.bashrc', '**/package.json']\n`,
    );
  });

  test.each([
    ['ls > .git/config', 'writes.deny[0]'],
    ['echo x >> package.json', 'writes.deny[3]'],
    ['ls 2> .git/hooks/pre-commit', 'writes.deny[0]'],
    ['ls &> .git', 'writes.deny[1]'],
    ['ls >& src/../.git/config', 'writes.deny[0]'],
    ['{ ls; } > .git/config', 'writes.deny[0]'],
    ['while false; do ls; done >> .git/config', 'writes.deny[0]'],
    ['cat <<EOF > .git/config\n[core]\nEOF', 'writes.deny[0]'],
    ['ls {fd}> .git/config', 'writes.deny[0]'],
    ['> .git/config', 'writes.deny[0]'],
    ['bash -c "ls > .git/config"', 'writes.deny[0]'],
    ['ls > ~/.bashrc', 'writes.deny[2]'],
    ['ls > innocent', 'writes.deny[0]'],
  ])('%s is denied by %s', (command, rule) => {
    const decision = engine.judge(line(command));
    expect(decision.decision).toBe('deny');
    expect(decision.ruleIds).toContain(rule);
    expect(decision.reason).toMatch(/writes .* which writes\.deny\[\d\] \(.*\) forbids/);
  });

  test('a write outside every allow pattern falls to writes.default', () => {
    const decision = engine.judge(line('ls > escape/x'));
    expect(decision).toMatchObject({ decision: 'deny', ruleIds: ['writes.default'] });
    expect(decision.reason).toContain(`writes ${join(outside, 'x')}`);
    expect(engine.judge(line('ls > dangling')).reason).toContain(join(outside, 'dangling-target'));
    expect(engine.judge(line('ls > ../outside/x')).ruleIds).toEqual(['writes.default']);
  });

  test('allowed writes name their pattern; fd duplications and /dev/null are fine', () => {
    expect(engine.judge(line('ls > out.txt 2>&1'))).toMatchObject({
      decision: 'allow',
      ruleIds: ['writes.allow[0]'],
    });
    expect(engine.judge(line('ls 2>/dev/null >&2 1>&-')).decision).toBe('allow');
  });

  test('${SERVER_CWD} and ${TMPDIR} in patterns are expanded', async () => {
    const placeholders = await engineFor(
      `  default: deny\n  allow: ['${'${SERVER_CWD}'}/**', '${'${TMPDIR}'}/**']\n`,
    );
    expect(placeholders.judge(line('ls > out.txt', { cwd: process.cwd() })).ruleIds).toEqual([
      'writes.allow[0]',
    ]);
    expect(placeholders.judge(line(`ls > ${join(tmpdir(), 'x')}`)).ruleIds).toEqual(['writes.allow[1]']);
    expect(placeholders.judge(line('ls > /etc/x')).ruleIds).toEqual(['writes.default']);
  });

  test('the judged path is recorded on the sub-command', () => {
    const decision = engine.judge(line('ls > escape/x'));
    expect(decision.subcommands[0]?.redirects).toEqual([
      expect.objectContaining({ operator: '>', target: 'escape/x', path: join(outside, 'x') }),
    ]);
  });

  test('a dynamic target is denied unless allowDynamic', async () => {
    expect(engine.judge(line('ls > "$HOME/.bashrc"')).reason).toContain(
      'the redirection target `"$HOME/.bashrc"` is built from an expansion',
    );
    const lax = await engineFor('  default: deny\n', 'allowDynamic: true\n');
    expect(lax.judge(line('ls > "$X"')).decision).toBe('allow');
  });
});

describe('default allow with denies', () => {
  test('deny overrides allow; unmatched writes follow the default', async () => {
    const engine = await engineFor(`  allow: ['${work}/**']\n  deny: ['${work}/.git/**']\n`);
    expect(engine.judge(line('ls > .git/config'))).toMatchObject({
      decision: 'deny',
      ruleIds: ['writes.deny[0]'],
    });
    expect(engine.judge(line('ls > /var/tmp/x')).decision).toBe('allow');
    expect(engine.judge(line('ls > README.md')).ruleIds).toEqual(['writes.allow[0]']);
  });

  test('~ in a pattern and in a target is the home directory', async () => {
    const engine = await engineFor("  deny: ['~/.profile']\n");
    expect(engine.judge(line('ls > ~/.profile')).decision).toBe('deny');
    expect(engine.judge(line(`ls > ${homedir()}/.profile`)).decision).toBe('deny');
    // Quoted, ~ is a directory named ~ in the cwd.
    expect(engine.judge(line("ls > '~'/.profile")).decision).toBe('allow');
  });

  test('a policy without writes allows every literal write', async () => {
    const engine = await createPolicyEngine(parsePolicyText('default: allow\n', join(work, 'p.yaml')));
    expect(engine.judge(line('ls > .git/config'))).toMatchObject({ decision: 'allow', ruleIds: [] });
  });

  test('input redirections are not writes', async () => {
    const engine = await engineFor('  default: deny\n');
    expect(engine.judge(line('cat < .git/config')).decision).toBe('allow');
    expect(engine.judge(line('ls > x')).decision).toBe('deny');
  });
});

describe('a line that changes directory before it writes', () => {
  let engine: PolicyEngine;
  beforeAll(async () => {
    engine = await engineFor(`  default: allow\n  deny: ['**/.git/**']\n`);
  });

  // Each relative target lands in .git, not in the request cwd: judged against every
  // directory the line can be in, one of which is .git, so it is denied by `writes.deny`.
  test.each([
    'cd .git && echo "[core] fsmonitor = id" >> config',
    'cd .git; ls > config',
    'pushd .git && ls > config',
    '(cd .git && ls > config)',
    'bash -c "cd .git; ls > config"',
    'cd .git && bash -c "ls > config"',
    'cd src; cd ../.git; ls > config',
  ])('%s: the write is judged where it lands, and denied', (command) => {
    const decision = engine.judge(line(command));
    expect(decision.decision).toBe('deny');
    expect(decision.ruleIds).toContain('writes.deny[0]');
  });

  // Where these land cannot be known before the line runs: the relative target is refused.
  test.each([
    'find . -name HEAD -execdir sh -c "ls > config" \\;',
    'env -C .git sh -c "ls > config"',
    'env --chdir=.git sh -c "ls > config"',
    'cd "$DIR" && ls > config',
    'cd - && ls > config',
    'HOME=/etc cd && ls > config',
    'cd ~root/x && ls > config',
    'cd .g* && ls > config',
    'CDPATH=/ cd etc && ls > passwd',
  ])('%s: a relative target is refused as not statically resolvable', (command) => {
    const decision = engine.judge(line(command));
    expect(decision.decision).toBe('deny');
    expect(decision.reason).toMatch(/changes directory .* not known in advance/);
  });

  test('`cd` alone and `cd ~/…` go to the home directory: the write is judged there', async () => {
    const home = await engineFor(`  deny: ['${homedir()}/**']\n`);
    expect(home.judge(line('cd && ls > config')).decision).toBe('deny');
    expect(home.judge(line('cd ~/x && ls > config')).decision).toBe('deny');
    expect(home.judge(line("cd '~/x' && ls > config")).decision).toBe('allow');
    expect(home.judge(line('ls > config')).decision).toBe('allow');
  });

  test('a cd into an allowed directory keeps ordinary writes allowed', () => {
    expect(engine.judge(line('cd src && npm run build > build.log 2>&1')).decision).toBe('allow');
    expect(engine.judge(line('pushd src && ls > listing.txt; popd')).decision).toBe('allow');
  });

  test('absolute and ~ targets are still judged, and lines without a cd are unaffected', () => {
    expect(engine.judge(line(`cd src && ls > ${work}/src/out.txt`)).decision).toBe('allow');
    expect(engine.judge(line(`cd src && ls > ${work}/.git/config`)).decision).toBe('deny');
    expect(engine.judge(line('ls > out.txt && cat out.txt')).decision).toBe('allow');
  });
});
