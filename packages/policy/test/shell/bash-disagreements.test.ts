// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the test data is shell syntax, not templates
import {
  backquoteMisreadings,
  plainTextExpansion,
  quotedInArithmetic,
  quotedInExpansion,
  reservedWordMessage,
  unmodeledHeredocSubstitutions,
} from '../../src/shell/bash-disagreements.js';
import { bashParser, nodeOf, nodesOf } from '../support/syntax-tree.js';

beforeAll(async () => {
  await bashParser();
});

describe('each check finds the misreading at the node, and nothing in the ordinary form', () => {
  test('plainTextExpansion: a leaf the parser took for text that bash expands', () => {
    const number = nodeOf('echo 2#$(x)', 'number');
    expect(plainTextExpansion(number)).toEqual({
      kind: 'unparseable',
      message: 'the parser read `2#$(x)` as plain text, but bash would expand it',
      at: number,
    });
    expect(plainTextExpansion(nodeOf('echo 2#101', 'number'))).toBeNull();
    expect(plainTextExpansion(nodeOf('echo abc', 'word'))).toBeNull();
    // An escaped `$(` stays text to bash too.
    expect(plainTextExpansion(nodeOf('echo a\\$\\(b', 'word'))).toBeNull();
  });

  test('backquoteMisreadings: adjacent backquotes, and a backslash inside backquotes', () => {
    const adjacent = nodeOf('echo `true``x`', 'command_substitution');
    expect(backquoteMisreadings(adjacent).map((f) => f.message)).toEqual([
      'adjacent backquote substitutions (bash runs each; the parser reads one)',
    ]);
    const escaped = nodeOf('echo `echo \\`x\\``', 'command_substitution');
    expect(backquoteMisreadings(escaped).map((f) => [f.kind, f.message, f.at])).toContainEqual([
      'unparseable',
      'a backslash inside backquotes (bash re-reads it there; the parser does not)',
      escaped,
    ]);
    expect(backquoteMisreadings(nodeOf('echo `x`', 'command_substitution'))).toEqual([]);
    expect(backquoteMisreadings(nodeOf('echo $(a\\b)', 'command_substitution'))).toEqual([]);
  });

  test('unmodeledHeredocSubstitutions: a body substitution the parser did not model', () => {
    const missed = nodeOf('cat <<EOF\n`x`\nEOF', 'heredoc_body');
    expect(unmodeledHeredocSubstitutions(missed)).toMatchObject({ kind: 'unparseable', at: missed });
    expect(unmodeledHeredocSubstitutions(nodeOf('cat <<EOF\n\t$(x)\nEOF', 'heredoc_body'))).not.toBeNull();
    expect(unmodeledHeredocSubstitutions(nodeOf('cat <<EOF\n$(x) and $y\nEOF', 'heredoc_body'))).toBeNull();
  });

  test('quotedInExpansion: a quoted string in ${…} that holds or decodes to $ or a backquote', () => {
    const expansion = nodeOf('echo "${x:-\'$(y)\'}"', 'expansion');
    const found = quotedInExpansion(expansion);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({
      kind: 'unparseable',
      message: "a quoted string in `${x:-'$(y)'}` that bash may expand (the parser reads it as literal)",
    });
    expect(found[0]!.at.text).toBe("'$(y)'");
    expect(quotedInExpansion(nodeOf('echo "${x:-$\'\\x24(y)\'}"', 'expansion'))).toHaveLength(1);
    expect(quotedInExpansion(nodeOf('echo "${x:-\'plain\'}"', 'expansion'))).toEqual([]);
  });

  test('quotedInArithmetic: a quoted $ in arithmetic', () => {
    const arithmetic = nodeOf("echo $(( 'a[$(x)]' ))", 'arithmetic_expansion');
    expect(quotedInArithmetic(arithmetic)).toMatchObject({
      kind: 'unparseable',
      message: expect.stringMatching(/^a quoted string `'a\[\$\(x\)\]'` evaluated as arithmetic/),
    });
    expect(quotedInArithmetic(nodeOf('echo $(( 1 + 2 ))', 'arithmetic_expansion'))).toBeNull();
  });

  test('reservedWordMessage: a reserved word read as a command name', () => {
    for (const word of ['if', 'then', '{', '}', '!', '[[', 'function']) {
      expect(reservedWordMessage(word)).toBe(
        `the reserved word \`${word}\` in command position (the parser did not read it as syntax)`,
      );
    }
    for (const name of ['ls', 'time', 'coproc', 'iff', '[']) expect(reservedWordMessage(name)).toBeNull();
  });

  test('no check fires on an ordinary line', () => {
    const line = 'echo "$(date)" ${x:-a} $((1 + 2)) `pwd` | grep -c x';
    const leaves = nodesOf(line, 'word', 'number', 'string_content');
    expect(leaves.map(plainTextExpansion).filter(Boolean)).toEqual([]);
    expect(nodesOf(line, 'command_substitution').flatMap(backquoteMisreadings)).toEqual([]);
    expect(nodesOf(line, 'expansion').flatMap(quotedInExpansion)).toEqual([]);
  });
});
