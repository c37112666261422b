// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the test data is shell syntax, not templates
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type CommandRequest,
  createPolicyEngine,
  type PolicyEngine,
  parsePolicyText,
} from '@termgate/policy';

/**
 * Where a relative write lands after the line changes directory: each
 * spelling of `cd`/`pushd` the engine follows is followed to the directory
 * it names (and judged there, by the deny pattern of that directory), and
 * each it cannot follow refuses the relative write. writes.test.ts has the
 * main cases; these pin the option and operand handling one spelling at a time.
 */
let work: string;
let root: string;

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'termgate-cwd-')));
  work = join(root, 'work');
  mkdirSync(join(work, '.git'), { recursive: true });
  mkdirSync(join(work, 'src'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const line = (command: string, extra: Partial<CommandRequest> = {}): CommandRequest => ({
  command,
  args: null,
  cwd: work,
  env: {},
  ...extra,
});

async function engineFor(deny: string[], extra = ''): Promise<PolicyEngine> {
  const text = `default: allow\n${extra}writes:\n  default: allow\n  deny: [${deny.map((d) => `'${d}'`).join(', ')}]\n`;
  return createPolicyEngine(parsePolicyText(text, join(work, 'p.yaml')));
}

const UNKNOWN = /changes directory .* not known in advance/;

describe('following cd and pushd', () => {
  let engine: PolicyEngine;
  let home: PolicyEngine;
  beforeAll(async () => {
    engine = await engineFor(['**/.git/**', '**/--/**']);
    home = await engineFor([`${homedir()}/**`]);
  });

  const deniedByPattern = (e: PolicyEngine, command: string, rule = 'writes.deny[0]') => {
    const decision = e.judge(line(command));
    expect({ command, decision: decision.decision, ruleIds: decision.ruleIds }).toEqual({
      command,
      decision: 'deny',
      ruleIds: [rule],
    });
  };
  const refused = (e: PolicyEngine, command: string) => {
    const decision = e.judge(line(command));
    expect(decision.decision).toBe('deny');
    expect(decision.reason).toMatch(UNKNOWN);
  };
  const allowed = (e: PolicyEngine, command: string) => {
    expect({ command, decision: e.judge(line(command)).decision }).toEqual({ command, decision: 'allow' });
  };

  test('the options -L, -P, -e, -@ (alone or together) and a first -- are not the operand', () => {
    for (const option of ['-L', '-P', '-e', '-@', '-LP', '-Pe', '--', '-P --']) {
      deniedByPattern(engine, `cd ${option} .git && ls > config`);
    }
  });

  test('an operand that only contains or starts with an option spelling is a directory', async () => {
    const dashed = await engineFor(['**/.git-L/**', '**/-Lx/**']);
    deniedByPattern(dashed, 'cd .git-L && ls > config');
    deniedByPattern(dashed, 'cd -- -Lx && ls > config', 'writes.deny[1]');
  });

  test('after --, an option spelling is the operand: a directory named -L', async () => {
    const dashed = await engineFor(['**/-L/**', '**/-P/**']);
    deniedByPattern(dashed, 'cd -- -L && ls > config');
    deniedByPattern(dashed, 'cd -P -- -P && ls > config', 'writes.deny[1]');
  });

  test('an option after the operand is not skipped: the line is refused, as bash refuses two operands', () => {
    refused(engine, 'cd .git -L && ls > config');
  });

  test('another option is not skipped: the line is refused, not followed', () => {
    refused(engine, 'cd -x .git && ls > config');
  });

  test('a second -- is the operand: a directory named --', () => {
    deniedByPattern(engine, 'cd -- -- && ls > config', 'writes.deny[1]');
  });

  test('the write is judged in every directory the line may be in, not only the last', () => {
    deniedByPattern(engine, 'cd .git; cd ../src; ls > config');
  });

  test('cd alone, cd ~ and cd ~/x go home, and the write is judged there', () => {
    deniedByPattern(home, 'cd && ls > config');
    deniedByPattern(home, 'cd ~ && ls > config');
    deniedByPattern(home, 'cd ~/x && ls > config');
    allowed(home, 'ls > config');
  });

  test('pushd alone (it swaps the stack), an empty operand and +N are refused', () => {
    refused(home, 'pushd && ls > config');
    refused(engine, 'cd "" && ls > config');
    refused(engine, 'pushd +1 && ls > config');
  });

  test('a + inside a name is an ordinary directory', () => {
    allowed(engine, 'cd a+b && ls > out.txt');
  });

  test('an assignment that is not HOME or CDPATH changes nothing', () => {
    allowed(engine, 'X=1; cd src && ls > out.txt');
    allowed(engine, 'CDPATH=/x; ls > out.txt');
    deniedByPattern(home, 'X=1; cd && ls > config');
  });

  test('up to 16 directories are tracked; past that the relative write is refused', () => {
    allowed(engine, 'cd a; cd b; cd c; cd d; ls > out.txt');
    refused(engine, 'cd a; cd b; cd c; cd d; cd e; ls > out.txt');
  });

  test('find -okdir and env -iC change directory; grep -C and an argument containing --ch do not', () => {
    refused(engine, 'find . -name HEAD -okdir sh -c "ls > config" \\;');
    refused(engine, 'env -iC .git sh -c "ls > config"');
    refused(engine, 'env -C.git > out.txt');
    allowed(engine, 'grep -C 3 x README.md > out.txt');
    allowed(engine, 'find . -name x > out.txt');
    allowed(engine, 'env X=a--ch ls > out.txt');
    allowed(engine, 'env X=a-C ls > out.txt');
  });
});

describe('a line whose directory is not known in advance', () => {
  let engine: PolicyEngine;
  beforeAll(async () => {
    engine = await engineFor(['**/.git/**']);
  });

  test('absolute and ~ targets are still judged; only the relative one is refused, naming the cd', () => {
    expect(engine.judge(line(`cd "$D" && ls > ${work}/out.txt`)).decision).toBe('allow');
    expect(engine.judge(line('cd "$D" && ls > ~/termgate-out.txt')).decision).toBe('allow');
    const decision = engine.judge(line('cd "$D" && ls > out.txt'));
    expect(decision.reason).toContain(
      'cannot judge the relative redirection target `out.txt`: the line changes directory (`cd "$D"`) to a place not known in advance',
    );
    expect(decision.subcommands[1]?.redirects?.[0]).not.toHaveProperty('path');
  });

  test('with allowDynamic the relative target goes unchecked, like other dynamic parts', async () => {
    const lenient = await engineFor(['**/.git/**'], 'allowDynamic: true\n');
    expect(lenient.judge(line('cd "$D" && ls > out.txt')).decision).toBe('allow');
  });
});
