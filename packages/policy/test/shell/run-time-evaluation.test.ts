// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the test data is shell syntax, not templates
import {
  arithmeticOnVariables,
  compoundAssignment,
  evaluatedExpansion,
  evaluatedSubscript,
  evaluatingTest,
  parameterTransformation,
} from '../../src/shell/run-time-evaluation.js';
import { bashParser, nodeOf } from '../support/syntax-tree.js';

beforeAll(async () => {
  await bashParser();
});

const messages = (found: readonly ({ kind: string; message: string } | null)[]) =>
  found.filter((f) => f !== null).map((f) => `${f.kind}: ${f.message}`);

test('evaluatedExpansion: indirection and substring offsets built from variables', () => {
  expect(messages([evaluatedExpansion(nodeOf('echo ${!y}', 'expansion'))])).toEqual([
    'dynamic: indirect expansion `${!y}`',
  ]);
  expect(messages([evaluatedExpansion(nodeOf('echo ${x:y}', 'expansion'))])).toEqual([
    'dynamic: arithmetic on variables in the substring expansion `${x:y}`',
  ]);
  expect(messages([evaluatedExpansion(nodeOf('echo ${x:0:$n}', 'expansion'))])).toHaveLength(1);
  for (const plain of ['echo ${!prefix*}', 'echo ${!arr[@]}', 'echo ${x:0:2}', 'echo ${x:-y}', 'echo ${x}']) {
    expect({ plain, found: evaluatedExpansion(nodeOf(plain, 'expansion')) }).toEqual({ plain, found: null });
  }
});

test('parameterTransformation: ${v@…}', () => {
  const node = nodeOf('echo ${v@Q}', 'expansion');
  expect(parameterTransformation(node)).toEqual({
    kind: 'dynamic',
    message: 'parameter transformation `${v@Q}`',
    at: node,
  });
  expect(parameterTransformation(nodeOf('echo ${v}', 'expansion'))).toBeNull();
});

test('compoundAssignment: non-numeric keys of an indexed array', () => {
  expect(messages(compoundAssignment(nodeOf('x=([y]=1 [2]=b)', 'array')))).toEqual([
    'dynamic: array key `[y]=` is evaluated at run time',
  ]);
  expect(compoundAssignment(nodeOf('x=([0]=a [-1]=b [ 2 ]=c)', 'array'))).toEqual([]);
  expect(compoundAssignment(nodeOf('declare -A m=([k]=v)', 'array'))).toEqual([]);
});

test('arithmeticOnVariables: any variable or substitution in arithmetic', () => {
  const arithmetic = nodeOf('echo $((x + 1))', 'arithmetic_expansion');
  expect(arithmeticOnVariables(arithmetic, arithmetic)).toEqual([
    { kind: 'dynamic', message: 'arithmetic on variables in `$((x + 1))`', at: arithmetic },
  ]);
  const nested = nodeOf('echo $(( (1 + $y) * 2 ))', 'arithmetic_expansion');
  expect(messages(arithmeticOnVariables(nested, nested))).not.toEqual([]);
  const constant = nodeOf('echo $(( (1 + 2) * 16#ff ))', 'arithmetic_expansion');
  expect(arithmeticOnVariables(constant, constant)).toEqual([]);
});

test('evaluatedSubscript: an index that is not a number, @ or *', () => {
  expect(messages([evaluatedSubscript(nodeOf('echo ${a[$i]}', 'subscript'))])).toEqual([
    'dynamic: array subscript `a[$i]` is evaluated at run time',
  ]);
  for (const plain of ['echo ${a[0]}', 'echo ${a[@]}', 'echo ${a[*]}']) {
    expect({ plain, found: evaluatedSubscript(nodeOf(plain, 'subscript')) }).toEqual({ plain, found: null });
  }
});

test('evaluatingTest: -v and arithmetic comparisons on variables or quoted strings', () => {
  expect(messages(evaluatingTest(nodeOf('[[ $x -eq 1 ]]', 'test_command')))).toEqual([
    'dynamic: `[[ $x -eq 1 ]]` evaluates arithmetic or subscripts',
  ]);
  expect(messages(evaluatingTest(nodeOf('[[ -v a ]]', 'test_command')))).toHaveLength(1);
  expect(messages(evaluatingTest(nodeOf("[[ 'a[$(x)]' -ne 1 ]]", 'test_command')))).toEqual([
    expect.stringMatching(/^unparseable: a quoted string `'a\[\$\(x\)\]'` evaluated as arithmetic/),
    "dynamic: `[[ 'a[$(x)]' -ne 1 ]]` evaluates arithmetic or subscripts",
  ]);
  expect(evaluatingTest(nodeOf('[[ -f $x ]]', 'test_command'))).toEqual([]);
  expect(evaluatingTest(nodeOf('[[ 1 -eq 2 ]]', 'test_command'))).toEqual([]);
});
