/**
 * Differential check: run corpus lines under real bash
 * with PATH = a directory of logging shims, and prove that every program
 * bash actually executed was among the simple commands the analyzer
 * extracted, unless the analyzer reported the line as not judgeable.
 *
 * Safety: PATH holds only shims; a shim logs its name and arguments and
 * exits 0. Wrapper shims (bash, sh, env, timeout, nice, nohup, stdbuf,
 * xargs, find) log and then exec the real tool, which can only reach other
 * shims. Lines run in a temp cwd with an empty stdin and a timeout.
 * Builtins (echo, printf, cd, test, eval, source, command, exec, …) cannot be
 * shimmed; what they run is still visible through the shims it reaches.
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createPolicyEngine, loadPolicyFile, type PolicyEngine, parsePolicyText } from '@termgate/policy';
import { parse } from 'yaml';
import { REAL_TOOLS, runUnderShims, BUILTINS as SHIM_BUILTINS, writeShims } from '../support/bash-shims.js';
import { DEFAULT_POLICY, readCorpus, STRICT_POLICY } from '../support/corpus.js';

const BUILTINS = new Set(
  (
    'echo printf cd test true false pwd eval source exec command builtin export declare local readonly ' +
    'typeset unset read let set shift trap alias unalias hash type wait time coproc if then else elif fi ' +
    'for while until do done case esac in function select break continue return exit enable shopt'
  ).split(' '),
);
const WRAPPERS: Readonly<Record<string, string>> = {
  bash: '/bin/bash',
  sh: '/bin/sh',
  env: '/usr/bin/env',
  timeout: '/usr/bin/timeout',
  nice: '/usr/bin/nice',
  nohup: '/usr/bin/nohup',
  stdbuf: '/usr/bin/stdbuf',
  xargs: '/usr/bin/xargs',
  find: '/usr/bin/find',
};

const entries = readCorpus().filter((e) => e.exec);
let engine: PolicyEngine;
let root: string;
let shims: string;
let executions = 0;
let hiddenButFlagged = 0;

beforeAll(async () => {
  engine = await createPolicyEngine(await loadPolicyFile(STRICT_POLICY));
  root = mkdtempSync(join(tmpdir(), 'termgate-diff-'));
  shims = join(root, 'bin');
  spawnSync('/bin/mkdir', [shims]);
  // Shim every word that could name a program, not only what the analyzer found:
  // a program the analyzer missed must still be caught by a shim.
  const names = new Set<string>();
  for (const e of entries) for (const w of e.line.match(/[A-Za-z_][A-Za-z0-9_.-]*/g) ?? []) names.add(w);
  for (const name of names) {
    // `bash x.sh` looks the script up on PATH; a script's contents are not commands of the line.
    if (BUILTINS.has(name) || name.endsWith('.sh')) continue;
    const real = WRAPPERS[name];
    // One write per invocation, so concurrent pipeline members do not interleave.
    const log = `entry="\${0##*/}"; for a in "$@"; do entry+=$'\\t'"$a"; done; printf '%s\\n' "$entry" >> "$SHIM_LOG"`;
    const script = `#!/bin/bash\n${log}\n${real && existsSync(real) ? `exec ${real} "$@"` : 'exit 0'}\n`;
    writeFileSync(join(shims, name), script);
    chmodSync(join(shims, name), 0o755);
  }
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

test('the differential subset is large', () => {
  expect(entries.length).toBeGreaterThanOrEqual(100);
});

test.each(entries.map((e) => [JSON.stringify(e.line), e.line] as const))('%s', (_name, line) => {
  const cwd = mkdtempSync(join(root, 'cwd-'));
  writeFileSync(join(cwd, 'README.md'), 'x\n');
  const logFile = join(root, `${basename(cwd)}.log`);
  writeFileSync(logFile, '');
  const run = spawnSync('/bin/bash', ['--noprofile', '--norc', '-c', line], {
    cwd,
    env: { PATH: shims, SHIM_LOG: logFile, HOME: cwd },
    input: '',
    timeout: 10_000,
    encoding: 'utf8',
  });
  const executed = readFileSync(logFile, 'utf8').split('\n').filter(Boolean);
  const explanation = engine.explain({ command: line, args: null, cwd, env: {} });
  const flagged = explanation.analysis.problems.length > 0;
  executions += executed.length;
  const extracted = new Set(
    explanation.analysis.commands.map((c) => [basename(c.program), ...c.argv.slice(1)].join('\t')),
  );
  const extractedNames = new Set(explanation.analysis.commands.map((c) => basename(c.program)));
  // Exact argv is comparable only when no expansion or substitution changes words at run time.
  const exactArgv = !/[$`*?{}]|[<>]\(/.test(line) && !line.includes('xargs');
  const missed = executed.filter((entry) => {
    const name = entry.split('\t')[0]!;
    return exactArgv ? !extracted.has(entry) : !extractedNames.has(name);
  });
  if (!flagged) {
    expect({ missed, notFound: /command not found/.test(run.stderr) }).toEqual({
      missed: [],
      notFound: false,
    });
  } else {
    // The analyzer refused the line; bash may well have run things it could not see.
    if (missed.length > 0) hiddenButFlagged++;
    expect(explanation.decision.decision).toBe('deny');
  }
});

test('the shims saw real executions, including ones only the refusals covered', () => {
  expect(executions).toBeGreaterThan(100);
  // e.g. `echo "$\\⏎(rm x)"`: bash runs rm, tree-sitter sees a string; the pre-lexer refuses it.
  expect(hiddenButFlagged).toBeGreaterThan(0);
});

/**
 * The parser-gap corpus (bash-gaps.corpus.yaml): lines from the classes a
 * security review found, several variants each, and ordinary lines. For
 * every line, under both shipped policies:
 * - bash really runs what the entry says (the fact is checked, not assumed);
 * - every program bash ran was extracted by the analyzer, or the line is
 *   denied with a reason (a refusal);
 * - no program that a deny rule names (judged on the argv and directory the
 *   shim saw) ran in a line the engine allowed;
 * - the decisions the entry expects.
 */
describe('parser-gap corpus', () => {
  interface GapEntry {
    readonly class: string;
    readonly line: string;
    readonly runs: readonly string[];
    readonly default?: 'allow' | 'deny' | 'ask';
    readonly strict?: 'allow' | 'deny' | 'ask';
  }
  const gaps = parse(readFileSync(join(import.meta.dirname, 'bash-gaps.corpus.yaml'), 'utf8')) as GapEntry[];
  let base: string;
  let work: string;
  let home: string;
  let bin: string;
  let savedHome: string | undefined;
  const policies: Record<'default' | 'strict', PolicyEngine> = {} as Record<
    'default' | 'strict',
    PolicyEngine
  >;

  beforeAll(async () => {
    base = realpathSync(mkdtempSync(join(tmpdir(), 'termgate-gaps-')));
    work = join(base, 'work');
    home = join(base, 'home');
    bin = join(base, 'bin');
    mkdirSync(join(home, '.ssh'), { recursive: true });
    mkdirSync(work);
    writeFileSync(join(home, '.ssh', 'id_rsa'), 'not a key\n');
    writeFileSync(join(home, '.ssh', 'id_rsa.pub'), 'ssh-ed25519 AAAA\n');
    const names = new Set(['sudo']);
    for (const e of gaps) for (const w of e.line.match(/[A-Za-z_][A-Za-z0-9_.-]*/g) ?? []) names.add(w);
    for (const b of SHIM_BUILTINS) names.delete(b);
    // These run for real after logging, inside the line's own directory: the lines
    // need the links, copies and directories they make. rm and everything else only log.
    const real = {
      ...REAL_TOOLS,
      ln: '/bin/ln',
      cp: '/bin/cp',
      mkdir: '/bin/mkdir',
      chmod: '/bin/chmod',
      cat: '/bin/cat',
      // The launchers judged as launchers run for real where the system has them (awk, sed
      // and tar are essential in Debian), so that what they run is a fact, not a guess.
      awk: '/usr/bin/awk',
      sed: '/bin/sed',
      tar: '/bin/tar',
      make: '/usr/bin/make',
    };
    writeShims(bin, names, real, join(base, 'shims.log'));
    // `~` in policies and lines is this home, for the engine as for bash.
    savedHome = process.env.HOME;
    process.env.HOME = home;
    for (const [key, file] of [
      ['default', DEFAULT_POLICY],
      ['strict', STRICT_POLICY],
    ] as const) {
      // The shipped files' workspace placeholder, pointed at this test's workspace.
      const text = readFileSync(file, 'utf8').replaceAll(['$', '{SERVER_CWD}'].join(''), work);
      policies[key] = await createPolicyEngine(parsePolicyText(text, file));
    }
  });

  afterAll(() => {
    if (savedHome === undefined) delete process.env.HOME;
    else process.env.HOME = savedHome;
    rmSync(base, { recursive: true, force: true });
  });

  test('every class has several variants, and the corpus is larger than the review examples', () => {
    const byClass = new Map<string, number>();
    for (const e of gaps) byClass.set(e.class, (byClass.get(e.class) ?? 0) + 1);
    expect(byClass.size).toBeGreaterThanOrEqual(11);
    for (const [, count] of byClass) expect(count).toBeGreaterThanOrEqual(4);
    expect(gaps.length).toBeGreaterThanOrEqual(90);
  });

  test.each(gaps.map((e) => [`[${e.class}] ${JSON.stringify(e.line)}`, e] as const))('%s', (_name, entry) => {
    const cwd = mkdtempSync(join(work, 'line-'));
    const line = entry.line.replaceAll('@BIN@', bin);
    const { executions } = runUnderShims(line, {
      shims: bin,
      cwd,
      home,
      log: join(base, 'shims.log'),
    });
    const ran = new Set(executions.map((x) => x.name));
    expect({ runs: entry.runs.filter((p) => !ran.has(p)) }).toEqual({ runs: [] });
    for (const key of ['default', 'strict'] as const) {
      const engine = policies[key];
      const explanation = engine.explain({ command: line, args: null, cwd, env: {} });
      const denied = explanation.decision.decision === 'deny';
      const extracted = new Set(explanation.analysis.commands.map((c) => basename(c.program)));
      const unseen = executions.filter((x) => !extracted.has(x.name)).map((x) => x.name);
      // A program the analyzer did not see is acceptable only in a line refused with a reason.
      expect({
        policy: key,
        unseen,
        refused: unseen.length > 0 && denied && explanation.refusals.length > 0,
      }).toEqual({ policy: key, unseen, refused: unseen.length > 0 });
      const named = executions.filter((x) =>
        engine
          .explain({ command: x.name, args: x.args, cwd: x.cwd, env: {} })
          .verdicts.some((v) => v.decision === 'deny' && v.rules.length > 0),
      );
      if (named.length > 0) {
        expect({
          policy: key,
          named: named.map((x) => x.name),
          decision: explanation.decision.decision,
        }).toEqual({
          policy: key,
          named: named.map((x) => x.name),
          decision: 'deny',
        });
      }
      const expected = entry[key];
      if (expected !== undefined) {
        expect({
          policy: key,
          decision: explanation.decision.decision,
          reason: explanation.decision.reason,
        }).toEqual({
          policy: key,
          decision: expected,
          reason: expect.any(String),
        });
      }
    }
  });
});
