// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the test data is shell syntax, not templates
import type { Node } from 'web-tree-sitter';
import {
  extractRedirections,
  extraWordsMessage,
  fdVariable,
  type RedirectionContext,
} from '../../src/shell/redirections.js';
import { bashParser, nodeOf, nodesOf } from '../support/syntax-tree.js';

beforeAll(async () => {
  await bashParser();
});

const context: RedirectionContext = { via: ['outer'], range: (n: Node) => [n.startIndex, n.endIndex] };

/** The redirections of `line`'s statements, as the walk hands them over. */
function extract(line: string) {
  return extractRedirections(
    nodesOf(line, 'file_redirect', 'heredoc_redirect', 'herestring_redirect'),
    context,
  );
}

describe('extractRedirections: the files a statement opens for writing', () => {
  test('output operators are writes, with their operator, descriptor, range and via', () => {
    const found = extract('ls > a 2>> b &> c >| d');
    expect(found.writes).toEqual([
      { operator: '>', target: 'a', literal: true, tilde: false, range: [3, 6], via: ['outer'] },
      {
        operator: '>>',
        descriptor: '2',
        target: 'b',
        literal: true,
        tilde: false,
        range: [7, 12],
        via: ['outer'],
      },
      { operator: '&>', target: 'c', literal: true, tilde: false, range: [13, 17], via: ['outer'] },
      { operator: '>|', target: 'd', literal: true, tilde: false, range: [18, 22], via: ['outer'] },
    ]);
    expect(found.words).toEqual([]);
    expect(found.problems).toEqual([]);
  });

  test('input, fd duplication, closing and a process substitution write no file', () => {
    for (const line of ['cat < in', 'ls 2>&1', 'ls >&2', 'ls >&-', 'ls > >(cat)', 'cat <<< x', 'cat <&3']) {
      expect({ line, ...extract(line) }).toEqual({ line, writes: [], words: [], problems: [] });
    }
    // `>&word` with a file name is a write of stdout and stderr.
    expect(extract('ls >&out.txt').writes).toMatchObject([
      { operator: '>&', target: 'out.txt', literal: true },
    ]);
  });

  test('targets are unquoted; a leading ~ is marked for expansion, a quoted one is not', () => {
    expect(extract('ls > "a b"').writes).toMatchObject([{ target: 'a b', literal: true, tilde: false }]);
    expect(extract('ls > ~/x').writes).toMatchObject([{ target: '~/x', literal: true, tilde: true }]);
    expect(extract('ls > "~/x"').writes).toMatchObject([{ target: '~/x', literal: true, tilde: false }]);
  });

  test.each([
    ['ls > "$X"', '`"$X"` is built from an expansion'],
    ['ls >& "$X"', 'is built from an expansion (it may name a file or an fd)'],
    ['ls > *.txt', '`*.txt` undergoes pathname expansion'],
    ['ls > {a,b}', '`{a,b}` undergoes brace expansion'],
    ['ls > ~root/x', 'starts with a tilde expansion other than `~`'],
  ])('a target not known in advance (%s) is a dynamic write and a dynamic problem', (line, why) => {
    const found = extract(line);
    expect(found.writes).toMatchObject([{ literal: false, tilde: false }]);
    expect(found.problems).toEqual([
      {
        kind: 'dynamic',
        message: expect.stringContaining(why),
        via: ['outer'],
        range: found.writes[0]!.range,
      },
    ]);
  });

  test('destination words after the first are handed back (bash reads them as arguments)', () => {
    const found = extract('rm >/dev/null -rf /');
    expect(found.writes).toMatchObject([{ target: '/dev/null' }]);
    expect(found.words.map((w) => w.text)).toEqual(['-rf', '/']);
    expect(extraWordsMessage(found.words)).toBe(
      'words after a redirection target (`-rf /`) where bash takes no arguments',
    );
  });

  test('the file redirections of a here-document are writes; its body is not', () => {
    const found = extract("cat <<'EOF' > run.sh\nid\nEOF");
    expect(found.writes).toMatchObject([{ operator: '>', target: 'run.sh', literal: true }]);
  });

  test('`{fd}>f`: the variable is the descriptor, and fdVariable names it only right before a redirection', () => {
    expect(extract('ls {fd}> log').writes).toMatchObject([{ descriptor: '{fd}', target: 'log' }]);
    expect(fdVariable(nodeOf('ls {fd}> log', 'word'))).toBeNull(); // `ls`
    // tree-sitter reads `{fd}` as a concatenation of `{`, `fd`, `}`.
    expect(fdVariable(nodeOf('ls {fd}> log', 'concatenation'))).toBe('fd');
    expect(fdVariable(nodeOf('echo {fd} > log', 'concatenation'))).toBeNull();
    expect(fdVariable(nodeOf('echo {fd}x> log', 'concatenation'))).toBeNull();
  });
});
