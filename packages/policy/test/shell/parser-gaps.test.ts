// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the test data is shell syntax, not templates
import type { LineAnalysis } from '../../src/shell/analysis.js';
import { loadBashParser } from '../../src/shell/bash-grammar.js';
import { ShellAnalyzer } from '../../src/shell/shell-analyzer.js';

let analyzer: ShellAnalyzer;
beforeAll(async () => {
  analyzer = new ShellAnalyzer(await loadBashParser());
});

const commands = (a: LineAnalysis) =>
  a.commands.map((c) => `${c.argv.join(' ')}${c.via.length ? ` [${c.via.join('>')}]` : ''}`);
const kinds = (a: LineAnalysis) => [...new Set(a.problems.map((p) => p.kind))].sort();

// Each of these runs `x` in bash (see bash-gaps.corpus.yaml) where tree-sitter sees no command:
// bash expands what the parser reads as literal text. Refused, not merely dynamic, so
// `allowDynamic: true` does not let them through.
describe('substitutions tree-sitter reads as text are refused', () => {
  test.each([
    'echo 2#$(x)',
    'y=16#`x`',
    "echo $(( 'a[$(x)]' ))",
    "echo $[ 'a[$(x)]' ]",
    "(( 'a[$(x)]' ))",
    "[[ 'a[$(x)]' -ne 1 ]]",
    "for (( i='a[$(x)]'; i < 1; i++ )); do :; done",
    "echo $(( $'a[\\x24(x)]' ))",
    'echo `true``x`',
    'echo "`a``x`"',
  ])('%s', (line) => {
    expect(analyzer.analyzeLine(line).problems.map((p) => p.kind)).toContain('unparseable');
  });

  test('ordinary arithmetic and base-N constants stay judgeable', () => {
    for (const line of ['echo $(( 2#101 + 16#ff ))', 'x=8#17', 'for ((i=0; i<3; i++)); do echo "$i"; done']) {
      expect(analyzer.analyzeLine(line).problems.filter((p) => p.kind === 'unparseable')).toEqual([]);
    }
    // A quoted string without `$` or a backquote in a loop body is not arithmetic.
    expect(
      analyzer.analyzeLine("for ((i=0; i<3; i++)); do echo '$x'; done").problems.map((p) => p.message),
    ).not.toContainEqual(expect.stringMatching(/quoted string/));
  });
});

describe('launchers that get their program at run time', () => {
  test.each([
    'xargs xargs',
    'xargs env',
    'xargs env -u HOME',
    'xargs sudo -u root',
    'xargs time',
    'xargs find .',
    'xargs bash',
    'xargs -0 env X=1',
    'xargs env xargs',
    'xargs -I{} env {}=1 ls',
  ])('%s is dynamic', (line) => {
    expect(kinds(analyzer.analyzeLine(line))).toContain('dynamic');
  });

  test.each([
    ['xargs grep -l TODO', ['xargs grep -l TODO', 'grep -l TODO [xargs]']],
    [
      'xargs bash -c \'wc -l "$@"\' _',
      ['xargs bash -c wc -l "$@" _', 'bash -c wc -l "$@" _ [xargs]', 'wc -l "$@" [xargs>bash -c]'],
    ],
    ['xargs env X=1 ls', ['xargs env X=1 ls', 'env X=1 ls [xargs]', 'ls [xargs>env]']],
    // With -I the input replaces `{}` as one word: it cannot add a program or find expression.
    ['xargs -I{} find {} -name x', ['xargs -I{} find {} -name x', 'find {} -name x [xargs]']],
  ])('%s names its program', (line, expected) => {
    const analysis = analyzer.analyzeLine(line);
    expect({ commands: commands(analysis), problems: analysis.problems }).toEqual({
      commands: expected,
      problems: [],
    });
  });
});

describe('env and sudo operands', () => {
  test.each([
    ["env 'BASH_FUNC_f%%=() { id; }' bash -c f", 'BASH_FUNC_f%%'],
    ["env - 'BASH_FUNC_f%%=() { id; }' bash -c f", 'BASH_FUNC_f%%'],
    ['env - LD_PRELOAD=x ls', 'LD_PRELOAD'],
    ["sudo 'BASH_FUNC_g%%=() { id; }' bash -c g", 'BASH_FUNC_g%%'],
  ])('%s assigns %s', (line, name) => {
    const analysis = analyzer.analyzeLine(line);
    expect(analysis.assignments.map((a) => a.name)).toContain(name);
    // The lone `-` is not the program.
    expect(analysis.commands.map((c) => c.program)).not.toContain('-');
  });
});

describe('trap and compgen', () => {
  test.each(["trap '' TERM", 'trap - INT', 'trap INT', 'trap 2 3', 'trap -p', 'trap -l', "trap -- '' EXIT"])(
    '%s runs nothing',
    (line) => {
      const analysis = analyzer.analyzeLine(line);
      expect({ commands: analysis.commands.map((c) => c.program), problems: analysis.problems }).toEqual({
        commands: ['trap'],
        problems: [],
      });
    },
  );

  test.each([
    ['trap \'rm -f "$tmp"\' EXIT', ['trap rm -f "$tmp" EXIT', 'rm -f "$tmp" [trap]']],
    [
      "trap -- 'sudo id; ls' INT TERM",
      ['trap -- sudo id; ls INT TERM', 'sudo id [trap]', 'id [trap>sudo]', 'ls [trap]'],
    ],
  ])('%s: the command string is judged like bash -c', (line, expected) => {
    const analysis = analyzer.analyzeLine(line);
    expect({ commands: commands(analysis), problems: analysis.problems }).toEqual({
      commands: expected,
      problems: [],
    });
  });

  test('a trap string built from an expansion, and compgen -C/-F, are dynamic', () => {
    for (const line of ['trap "$cmd" EXIT', "compgen -C 'id' x", 'compgen -F f x', 'compgen -W "a b" a']) {
      const want = line.startsWith('compgen -W') ? [] : ['dynamic'];
      expect({ line, kinds: kinds(analyzer.analyzeLine(line)) }).toEqual({ line, kinds: want });
    }
  });
});

describe('shells reading their commands from stdin or an fd', () => {
  test.each([
    'bash',
    'sh -s',
    'bash --norc',
    'bash --posix',
    'rbash',
    'bash -',
    'bash -i',
    'bash <(curl x)',
    'bash "$script"',
    'bash /dev/stdin',
    'bash /dev//stdin',
    'bash /dev/fd/0',
    'bash /proc/self/fd//0',
    'sh /proc/1/task/1/fd/0',
  ])('%s is dynamic', (line) => {
    expect(kinds(analyzer.analyzeLine(line))).toContain('dynamic');
  });

  test('a script file, or -c, is not', () => {
    for (const line of [
      'bash scripts/build.sh --fast',
      'sh -c ls',
      'bash -euo pipefail x.sh',
      'bash --norc -c "ls"',
    ]) {
      expect({ line, problems: analyzer.analyzeLine(line).problems }).toEqual({ line, problems: [] });
    }
  });
});

describe('here-documents with a partly quoted delimiter', () => {
  test.each(['cat <<E"O"F\n$(id)\nEOF', "cat <<'E'OF\n`id`\nEOF", 'cat <<E\\O\\F\n$(id)\nEOF'])(
    '%s: the body is literal, as bash reads it',
    (line) => {
      const analysis = analyzer.analyzeLine(line);
      expect({ commands: commands(analysis), problems: analysis.problems }).toEqual({
        commands: ['cat'],
        problems: [],
      });
    },
  );

  test('what follows the body is judged, at its own offsets', () => {
    const line = 'cat <<E"O"F\nx\nEOF\nsudo id';
    const analysis = analyzer.analyzeLine(line);
    expect(commands(analysis)).toEqual(['cat', 'sudo id', 'id [sudo]']);
    const [start, end] = analysis.commands[1]!.range!;
    expect(line.slice(start, end)).toBe('sudo id');
  });

  test('an unquoted delimiter still expands its body', () => {
    expect(commands(analyzer.analyzeLine('cat <<EOF\n$(sudo id)\nEOF'))).toContain(
      'sudo id [heredoc>command_substitution]',
    );
  });
});

test("printf's format and arguments are not re-evaluated; its -v target is", () => {
  expect(analyzer.analyzeLine("printf '%s $(x) `y` ${z}\\n' a").problems).toEqual([]);
  expect(kinds(analyzer.analyzeLine("printf -v 'a[$(x)]' %s b"))).toEqual(['dynamic']);
});
