import { literalToken } from '../../src/shell/analysis.js';
import { MAX_PIPES, type Scope, ShellWalk } from '../../src/shell/shell-walk.js';
import { bashParser } from '../support/syntax-tree.js';

const TOP: Scope = { via: [], functions: new Set(), depth: 0 };
let walk: () => ShellWalk;

beforeAll(async () => {
  const parser = await bashParser();
  walk = () => new ShellWalk(parser);
});

/** Walks `line` as the top-level text and returns the result. */
function walked(line: string) {
  const w = walk();
  w.text(line, TOP);
  return w.result();
}

const shown = (r: ReturnType<typeof walked>) =>
  r.commands.map((c) => `${c.argv.join(' ')}${c.via.length ? ` [${c.via.join('>')}]` : ''}`);

describe('the walk: every simple command, in source order, with what encloses it', () => {
  test('pipelines, subshells, substitutions and process substitutions label their commands', () => {
    const r = walked('ls | (cat <(echo a)) && echo "$(pwd)"');
    expect(shown(r)).toEqual([
      'ls [pipeline]',
      'cat <(echo a) [pipeline>subshell]',
      'echo a [pipeline>subshell>process_substitution]',
      'echo "$(pwd)"',
      'pwd [command_substitution]',
    ]);
    expect(r.problems).toEqual([]);
  });

  test('a function body is walked under its name, and a call of it is dynamic', () => {
    const r = walked('f() { rm x; }; f');
    expect(shown(r)).toEqual(['rm x [function f]', 'f']);
    expect(r.problems).toEqual([
      { kind: 'dynamic', message: '`f` calls a function defined in this line', via: [], range: [15, 16] },
    ]);
  });

  test('compound commands hand their output redirections to the commands inside, not to substitutions', () => {
    const r = walked('{ echo $(pwd); ls > a; } > b');
    const byArgv = Object.fromEntries(r.commands.map((c) => [c.argv[0], c.redirects?.map((w) => w.target)]));
    expect(byArgv).toEqual({ echo: ['b'], pwd: undefined, ls: ['b', 'a'] });
    // Recorded once each, in source order (the statement's own are read before its body).
    expect(r.redirects.map((w) => w.target)).toEqual(['a', 'b']);
    // A substitution's output is captured, wherever it is: in an assignment, a loop's word list.
    const captured = walked('{ x=$(pwd); for f in $(ls); do echo "$f"; done; } > b');
    expect(captured.commands.map((c) => [c.argv[0], c.redirects?.map((w) => w.target)])).toEqual([
      ['pwd', undefined],
      ['ls', undefined],
      ['echo', ['b']],
    ]);
  });

  test('a string run by a wrapper is walked with the wrapper in via; its problems carry the range of the whole command', () => {
    const line = "bash -c 'echo $((x)); echo $((x))'";
    const r = walked(line);
    expect(shown(r)).toEqual([
      'bash -c echo $((x)); echo $((x))',
      'echo $((x)) [bash -c]',
      'echo $((x)) [bash -c]',
    ]);
    // Two findings with the same message at the same (outer) range are one problem.
    expect(r.problems).toEqual([
      {
        kind: 'dynamic',
        message: 'arithmetic on variables in `$((x))`',
        via: ['bash -c'],
        range: [0, line.length],
      },
    ]);
  });

  test('assignments are recorded: in-line, exported, declared, `{fd}` and by wrappers', () => {
    const r = walked('A=1 ls; export B; declare -x C=2; ls {fd}> f; env D=1 ls');
    expect(r.assignments.map((a) => a.name)).toEqual(['A', 'B', 'C', 'fd', 'D']);
  });

  test('syntax errors, nesting depth and pipe counts are refused as unparseable', () => {
    expect(walked('ls &&').problems).toMatchObject([
      { kind: 'unparseable', message: 'syntax error: missing `word`' },
    ]);
    let nested = 'ls';
    for (let i = 0; i < 10; i++) nested = `bash -c ${JSON.stringify(nested)}`;
    expect(walked(nested).problems.map((p) => p.message)).toContain('wrappers nested too deeply');
    expect(walked('ls|'.repeat(MAX_PIPES + 1)).problems.map((p) => p.message)).toEqual([
      `more than ${MAX_PIPES} \`|\` characters`,
    ]);
  });

  test('command names: an expansion, a glob or a reserved word is not judged as a program', () => {
    expect(walked('$X a').problems).toMatchObject([
      { kind: 'dynamic', message: expect.stringMatching(/^the command name `\$X`/) },
    ]);
    expect(walked('r? a').problems).toMatchObject([
      { kind: 'dynamic', message: expect.stringMatching(/pathname or brace/) },
    ]);
    const reserved = walked('! if true; then rm x; fi');
    expect(reserved.problems.map((p) => p.kind)).toContain('unparseable');
    expect(reserved.problems.map((p) => p.message)).toContain(
      'the reserved word `if` in command position (the parser did not read it as syntax)',
    );
  });

  test('emit (argv requests): one command, wrappers unwrapped, their strings walked', () => {
    const w = walk();
    w.emit(
      ['env', 'FOO=1', 'bash', '-c', 'ls | wc -l'].map((a) => literalToken(a)),
      undefined,
      TOP,
    );
    const r = w.result();
    expect(shown(r)).toEqual([
      'env FOO=1 bash -c ls | wc -l',
      'bash -c ls | wc -l [env]',
      'ls [env>bash -c>pipeline]',
      'wc -l [env>bash -c>pipeline]',
    ]);
    expect(r.assignments.map((a) => a.name)).toEqual(['FOO']);
  });

  test('refuse records a line-level problem', () => {
    const w = walk();
    w.refuse('too long');
    expect(w.result().problems).toEqual([{ kind: 'unparseable', message: 'too long', via: [] }]);
  });
});
