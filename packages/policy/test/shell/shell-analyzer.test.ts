// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the test data is shell syntax, not templates
import { existsSync } from 'node:fs';
import { assertBashCompatibleShell, DEFAULT_POLICY_PATH } from '@termgate/policy';
import type { LineAnalysis } from '../../src/shell/analysis.js';
import { loadBashParser, ParseBudgetError } from '../../src/shell/bash-grammar.js';
import { MAX_LINE_LENGTH, MAX_PIPES, ShellAnalyzer } from '../../src/shell/shell-analyzer.js';

let analyzer: ShellAnalyzer;
beforeAll(async () => {
  analyzer = new ShellAnalyzer(await loadBashParser());
});

/** Each extracted command as `argv joined by spaces [via]`. */
function commands(analysis: LineAnalysis): string[] {
  return analysis.commands.map((c) => `${c.argv.join(' ')}${c.via.length ? ` [${c.via.join('>')}]` : ''}`);
}
const kinds = (analysis: LineAnalysis) => [...new Set(analysis.problems.map((p) => p.kind))];

describe('unquoting', () => {
  test.each([
    ['\\rm x', 'rm'],
    ["r''m x", 'rm'],
    ['"sudo" x', 'sudo'],
    ['\'s\'"u"do x', 'sudo'],
    ["$'r\\x6d' x", 'rm'],
    ["$'\\162m' x", 'rm'],
    ["$'\\u0072m' x", 'rm'],
    ['"a\\"b\\$c" x', 'a"b$c'],
    ['x\\ y z', 'x y'],
    ['$"sudo" x', 'sudo'],
    ['s$"udo" x', 'sudo'],
  ])('%s → %s', (text, program) => {
    const analysis = analyzer.analyzeLine(text);
    expect(analysis.commands[0]?.program).toBe(program);
    expect(analysis.problems).toEqual([]);
  });
});

test.each([
  ['rm -rf $"/"', ['rm', '-rf', '/']],
  ['echo "a"$"b" c$"d" "$" "x$"', ['echo', 'ab', 'cd', '$', 'x$']],
])('`$"…"` is a translation prefix: %s', (text, argv) => {
  expect(analyzer.analyzeLine(text).commands[0]?.argv).toEqual(argv);
});

describe('extraction sites', () => {
  test.each([
    ['a; b && c || d & e', ['a', 'b', 'c', 'd', 'e']],
    ['a\nb', ['a', 'b']],
    ['a | b |& c', ['a [pipeline]', 'b [pipeline]', 'c [pipeline]']],
    ['(a); { b; }', ['a [subshell]', 'b']],
    [
      'echo $(a) `b` "x$(c)"',
      [
        'echo $(a) `b` "x$(c)"',
        'a [command_substitution]',
        'b [command_substitution]',
        'c [command_substitution]',
      ],
    ],
    ['cat <(a) >(b)', ['cat <(a) >(b)', 'a [process_substitution]', 'b [process_substitution]']],
    ['echo ${x:-$(a)}', ['echo ${x:-$(a)}', 'a [command_substitution]']],
    ['x=$(a) y', ['a [command_substitution]', 'y']],
    ['cat <<EOF\n$(a)\nEOF', ['cat', 'a [heredoc>command_substitution]']],
    ["cat <<'EOF'\n$(a)\nEOF", ['cat']],
    ['cat <<< "$(a)"', ['cat', 'a [command_substitution]']],
    ['ls > "$(a)"', ['ls', 'a [command_substitution]']],
    ['if a; then b; elif c; then d; else e; fi', ['a', 'b', 'c', 'd', 'e']],
    ['for i in x; do a; done; while b; do c; done; case x in y) d;; esac', ['a', 'b', 'c', 'd']],
    ['echo $((1 + $(a)))', ['echo $((1 + $(a)))', 'a [command_substitution]']],
    ['f() { a; }', ['a [function f]']],
  ])('%s', (text, expected) => {
    expect(commands(analyzer.analyzeLine(text))).toEqual(expected);
  });
});

describe('wrappers (the wrapper and what it runs are both commands)', () => {
  test.each([
    ['env -i -- A=1 a x', ['env -i -- A=1 a x', 'a x [env]']],
    ['env A=1 -- a', ['env A=1 -- a', '-- a [env]']],
    ['env -u HOME a', ['env -u HOME a', 'a [env]']],
    ['nice -n 5 a', ['nice -n 5 a', 'a [nice]']],
    ['timeout -s KILL 5s a', ['timeout -s KILL 5s a', 'a [timeout]']],
    ['nohup a', ['nohup a', 'a [nohup]']],
    ['stdbuf -oL a', ['stdbuf -oL a', 'a [stdbuf]']],
    ['time -p a', ['time -p a', 'a [time]']],
    ['command -p a', ['command -p a', 'a [command]']],
    ['command -v a', ['command -v a']],
    ['builtin cd x', ['builtin cd x', 'cd x [builtin]']],
    ['exec -a n a', ['exec -a n a', 'a [exec]']],
    ['exec >f', ['exec']],
    ['sudo -u root a', ['sudo -u root a', 'a [sudo]']],
    ['xargs -0 -n1 a x', ['xargs -0 -n1 a x', 'a x [xargs]']],
    ['xargs', ['xargs', 'echo [xargs]']],
    [
      'find . -exec a {} \\; -ok b {} +',
      ['find . -exec a {} ; -ok b {} +', 'a {} [find -exec]', 'b {} [find -exec]'],
    ],
    ['bash -c "a; b"', ['bash -c a; b', 'a [bash -c]', 'b [bash -c]']],
    ['sh -euo pipefail -c a', ['sh -euo pipefail -c a', 'a [sh -c]']],
    ['bash -c "sh -c \'a\'"', ["bash -c sh -c 'a'", 'sh -c a [bash -c]', 'a [bash -c>sh -c]']],
    ['bash script.sh', ['bash script.sh']],
  ])('%s', (text, expected) => {
    const analysis = analyzer.analyzeLine(text);
    expect(commands(analysis)).toEqual(expected);
    expect(analysis.problems).toEqual([]);
  });

  test.each([
    'timeout --bogus 5 a',
    'env -S "a b"',
    'nice --what a',
    'find . -exec a',
    'bash --rc x -c a',
    'timeout x a',
    'nohup',
  ])('unknown wrapper forms cannot be judged: %s', (text) => {
    expect(kinds(analyzer.analyzeLine(text))).toContain('unparseable');
  });

  test('argv requests unwrap too', () => {
    expect(commands(analyzer.analyzeArgv(['env', 'bash', '-c', 'a | b']))).toEqual([
      'env bash -c a | b',
      'bash -c a | b [env]',
      'a [env>bash -c>pipeline]',
      'b [env>bash -c>pipeline]',
    ]);
  });
});

describe('what cannot be judged', () => {
  test.each([
    ['$X a', 'dynamic'],
    ['"$cmd"', 'dynamic'],
    ['${X:-sudo} a', 'dynamic'],
    ['$(echo rm) x', 'dynamic'],
    ['eval a', 'dynamic'],
    ['source f', 'dynamic'],
    ['. f', 'dynamic'],
    ['alias a=b', 'dynamic'],
    ['trap "$X" EXIT', 'dynamic'],
    ['enable -f x y', 'dynamic'],
    ['coproc a', 'dynamic'],
    ['f() { a; }; f', 'dynamic'],
    ['echo ${v@P}', 'dynamic'],
    ['echo ${v@E}', 'dynamic'],
    ['r{m,x} a', 'dynamic'],
    ['/bin/r? a', 'dynamic'],
    ['echo $((x))', 'dynamic'],
    ['a[i]=1', 'dynamic'],
    ['echo ${x:y}', 'dynamic'],
    ['echo ${x:0:y}', 'dynamic'],
    ['echo ${x:1:$y}', 'dynamic'],
    ['echo "${a[@]:y}"', 'dynamic'],
    ['echo ${!y}', 'dynamic'],
    ['echo "${!y:-z}"', 'dynamic'],
    ['x=([y]=1)', 'dynamic'],
    ['x+=([$y]=1)', 'dynamic'],
    ['declare -a x=([y]=1)', 'dynamic'],
    ["printf -v 'z[y]' x", 'dynamic'],
    ['printf -vz[y] x', 'dynamic'],
    ["read 'z[y]'", 'dynamic'],
    ["unset 'a[y]'", 'dynamic'],
    ["declare 'a[y]=1'", 'dynamic'],
    ['declare -n r=$y', 'dynamic'],
    ['hash -p /bin/rm ls', 'dynamic'],
    ['bash -c "$X"', 'dynamic'],
    ['find /usr/bin -name sudo -exec {} id \\;', 'dynamic'],
    ['find . -exec timeout 5 {} \\;', 'dynamic'],
    ["find . -exec sh -c 'echo {}' \\;", 'dynamic'],
    ["xargs -I{} sh -c '{}'", 'dynamic'],
    ["xargs -I % bash -c 'cat %'", 'dynamic'],
    ["xargs -i sh -c 'echo {}'", 'dynamic'],
    ["xargs --replace=R sh -c 'R'", 'dynamic'],
    ['echo "$\\\n(a)"', 'unparseable'],
    ['r\\\nm', 'unparseable'],
    ['ls \\\r\nrm x', 'unparseable'],
    ['ls\rrm x', 'unparseable'],
    ['echo ${x:=`a`}', 'unparseable'],
    ['echo `echo \\`a\\``', 'unparseable'],
    ['cat <<EOF\n`a`\nEOF', 'unparseable'],
    ['cat <<EOF\n\t$(a)\nEOF', 'unparseable'],
    ['echo "open', 'unparseable'],
    ['! { a; }', 'unparseable'],
    ['! if true; then a; fi', 'unparseable'],
    ['! for i in 1; do a; done', 'unparseable'],
    ['time { a; }', 'unparseable'],
    ['time -p if true; then a; fi', 'unparseable'],
    ['time ! a', 'unparseable'],
    ['time while true; do a; done', 'unparseable'],
    ['echo "${x:-\'$(a)\'}"', 'unparseable'],
    ['echo "${x:=\'`a`\'}"', 'unparseable'],
    ['echo "${x:-$\'\\x24(a)\'}"', 'unparseable'],
    ['echo "${x:+$\'\\x60a\\x60\'}"', 'unparseable'],
    ['a &&', 'unparseable'],
  ])('%s → %s', (text, kind) => {
    expect(kinds(analyzer.analyzeLine(text))).toContain(kind);
  });

  test.each([
    'echo ${x:1} ${x: -1} ${x:(-1)} ${x:1+1} ${!x*} ${!a[@]} ${#x}',
    'a=([0]=1 [1]=2 c)',
    'declare -A m=([k]=v)',
    "printf -v z x; printf '[%s]' x; printf -v 'z[0]' x",
    'read -r line; unset x',
  ])('evaluates no names: %s', (text) => {
    expect(analyzer.analyzeLine(text).problems).toEqual([]);
  });

  test('lines too long for `bash -c`, and long pipelines, are refused without parsing', () => {
    const long = analyzer.analyzeLine(`ls ${'a '.repeat(MAX_LINE_LENGTH / 2)}`);
    expect(long.problems.map((p) => p.kind)).toEqual(['unparseable']);
    expect(kinds(analyzer.analyzeArgv(['ls', 'a'.repeat(MAX_LINE_LENGTH)]))).toEqual(['unparseable']);
    // Ending in a syntax error, this used to take seconds and gigabytes in tree-sitter's error recovery.
    const pipes = analyzer.analyzeLine('ls|'.repeat(MAX_PIPES + 1));
    expect(pipes.problems.map((p) => p.message)).toEqual([`more than ${MAX_PIPES} \`|\` characters`]);
    expect(kinds(analyzer.analyzeLine(`bash -c '${'ls|'.repeat(MAX_PIPES + 1)}ls'`))).toEqual([
      'unparseable',
    ]);
    expect(analyzer.analyzeLine(`${'ls|'.repeat(MAX_PIPES - 1)}ls`).problems).toEqual([]);
    expect(commands(analyzer.analyzeLine('ls; rm x'))).toEqual(['ls', 'rm x']);
  });

  test('a parse cancelled by the time budget does not resume on the next line', async () => {
    const parser = await loadBashParser();
    let cancelled = false;
    try {
      parser.parse('ls;'.repeat(43_000)).delete();
    } catch (error) {
      expect(error).toBeInstanceOf(ParseBudgetError);
      cancelled = true;
    }
    const tree = parser.parse('rm x');
    expect({ sexp: tree.rootNode.toString(), end: tree.rootNode.endIndex }).toEqual({
      sexp: '(program (command name: (command_name (word)) argument: (word)))',
      end: 4,
    });
    tree.delete();
    // Whether 150 ms ran out depends on the machine; when it did, the error said so.
    expect(typeof cancelled).toBe('boolean');
  });

  test.each([
    'find . -exec grep -l TODO {} +',
    'find . -exec sh -c \'grep -l TODO "$1"\' sh {} \\;',
    'xargs -I{} cp {} {}.bak',
    "xargs -n1 sh -c 'echo {}'",
  ])('placeholders as plain arguments are fine: %s', (text) => {
    expect(analyzer.analyzeLine(text).problems).toEqual([]);
  });

  test('a plain line continuation after a blank is fine', () => {
    expect(analyzer.analyzeLine('git \\\n  status').problems).toEqual([]);
  });
});

describe('output redirections', () => {
  /** Each write as `[fd]operator target`, `?` marking a dynamic target. */
  const writes = (line: string) =>
    analyzer
      .analyzeLine(line)
      .redirects.map((r) => `${r.descriptor ?? ''}${r.operator}${r.literal ? '' : '?'}${r.target}`);

  test.each([
    ['ls > .git/config', ['>.git/config']],
    ['echo x >> package.json', ['>>package.json']],
    ['printf x >| tests/x.test.js', ['>|tests/x.test.js']],
    ['ls &> out', ['&>out']],
    ['ls &>> out', ['&>>out']],
    ['ls >&out', ['>&out']],
    ['ls 2>err', ['2>err']],
    ['ls {fd}>out', ['{fd}>out']],
    ['ls >"a b" 2>>\'c\'d', ['>a b', '2>>cd']],
    ['cat <<EOF > out\nhi\nEOF', ['>out']],
    ["cat <<< 'x' > out", ['>out']],
    ['exec 3>out', ['3>out']],
    ['> out', ['>out']],
    ['echo $(ls > inner) > outer', ['>inner', '>outer']],
    ['bash -c "ls > inner"', ['>inner']],
  ])('%s', (line, expected) => {
    expect(writes(line)).toEqual(expected);
  });

  test.each([
    'ls 2>&1',
    'ls >&2',
    'ls 1>&-',
    'ls 2>&1-',
    'ls < in',
    'ls <&0',
    'cat <<EOF\nx\nEOF',
    'ls > >(cat)',
    'ls > ""',
  ])('writes no file: %s', (line) => {
    expect(writes(line)).toEqual([]);
  });

  test.each([
    ['{ ls; pwd; } > out', ['ls', 'pwd']],
    ['( ls ) > out', ['ls']],
    ['while false; do ls; done > out', ['false', 'ls']],
    ['for f in a; do ls; done 2> out', ['ls']],
    ['if true; then ls; fi > out', ['true', 'ls']],
    ['timeout 1 ls > out', ['timeout 1 ls', 'ls']],
  ])('a compound command passes its redirections to the commands inside: %s', (line, argvs) => {
    const analysis = analyzer.analyzeLine(line);
    expect(analysis.redirects.map((r) => r.target)).toEqual(['out']);
    expect(analysis.commands.map((c) => [c.argv.join(' '), c.redirects?.map((r) => r.target)])).toEqual(
      argvs.map((a) => [a, ['out']]),
    );
  });

  test('a command substitution does not inherit the redirection of its command', () => {
    const analysis = analyzer.analyzeLine('echo $(ls) > out');
    expect(analysis.commands.map((c) => c.redirects?.length ?? 0)).toEqual([1, 0]);
  });

  test('words after a target are arguments (`rm >/dev/null -rf /` runs `rm -rf /`)', () => {
    expect(commands(analyzer.analyzeLine('rm >/dev/null -rf /'))).toEqual(['rm -rf /']);
    expect(commands(analyzer.analyzeLine('echo a >f b "c" 2>g d'))).toEqual(['echo a b c d']);
    expect(kinds(analyzer.analyzeLine('{ ls; } > f x'))).toEqual(['unparseable']);
  });

  test('`{fd}>f` is no argument; it assigns the variable', () => {
    const analysis = analyzer.analyzeLine('ls {PATH}>f');
    expect(commands(analysis)).toEqual(['ls']);
    expect(analysis.assignments.map((a) => a.name)).toEqual(['PATH']);
    expect(commands(analyzer.analyzeLine('echo {x} >f'))).toEqual(['echo {x}']);
  });

  test('an unquoted leading ~ is marked for expansion; a quoted one is not', () => {
    expect(analyzer.analyzeLine('ls > ~/.bashrc').redirects[0]).toMatchObject({
      target: '~/.bashrc',
      tilde: true,
    });
    expect(analyzer.analyzeLine("ls > '~'/x").redirects[0]).toMatchObject({ target: '~/x', tilde: false });
  });

  test.each([
    ['ls > "$HOME/x"', 'is built from an expansion'],
    ['ls > $(echo f)', 'is built from an expansion'],
    ['ls >&$fd', 'may name a file or an fd'],
    ['ls > *.txt', 'pathname expansion'],
    ['ls > {a,b}', 'brace expansion'],
    ['ls > ~root/x', 'tilde expansion'],
  ])('dynamic target: %s', (line, why) => {
    const analysis = analyzer.analyzeLine(line);
    expect(analysis.redirects[0]?.literal).toBe(false);
    expect(analysis.problems.filter((p) => p.kind === 'dynamic').map((p) => p.message)).toEqual([
      expect.stringContaining(why),
    ]);
  });
});

describe('module location and shell check', () => {
  test('DEFAULT_POLICY_PATH points at the shipped policy', () => {
    expect(DEFAULT_POLICY_PATH).toMatch(/policies\/default\.yaml$/);
    expect(existsSync(DEFAULT_POLICY_PATH)).toBe(true);
  });

  test('assertBashCompatibleShell accepts bash and refuses other shells', async () => {
    await expect(assertBashCompatibleShell('/bin/bash')).resolves.toMatch(/^\d+\./);
    await expect(assertBashCompatibleShell('/bin/sh')).rejects.toMatchObject({ code: 'SHELL_UNSUPPORTED' });
    await expect(assertBashCompatibleShell('/nonexistent/bash')).rejects.toMatchObject({
      code: 'SHELL_UNSUPPORTED',
    });
  });
});
