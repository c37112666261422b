import type { Node } from 'web-tree-sitter';
import { QUOTED_STRINGS } from './arithmetic-quotes.js';
import { quotedInArithmetic } from './bash-disagreements.js';
import { containsType, type Finding } from './syntax-nodes.js';

/**
 * Checks for constructs that bash evaluates at run time as code: arithmetic
 * evaluates variables recursively, and a variable holding `a[$(cmd)]` runs
 * cmd when it is used as a subscript (bash manual, "Shell Arithmetic" and
 * "Arrays": https://www.gnu.org/software/bash/manual/bash.html#Shell-Arithmetic).
 * The parser reads these correctly, but what they run is only known at run
 * time: each finding is `dynamic` (denied unless the policy sets `allowDynamic`).
 */

const ARITHMETIC_COMPARISON = new Set(['-eq', '-ne', '-lt', '-le', '-gt', '-ge']);
const VARIABLE_REFERENCE = new Set([
  'simple_expansion',
  'expansion',
  'variable_name',
  'word',
  'command_substitution',
]);
/** `${!prefix*}`, `${!prefix@}`, `${!array[@]}`: list names or keys, evaluate nothing. */
const INDIRECT_LISTING = /^\$\{![A-Za-z_][A-Za-z0-9_]*([*@]|\[[*@]\])\}$/;

/**
 * An `expansion` that evaluates a variable's value as an arithmetic
 * expression or a name with a subscript, so `y='a[$(cmd)]'` set earlier
 * runs cmd: substring offsets (`${x:y}`, `${x:0:y}`) and indirection (`${!y}`).
 */
export function evaluatedExpansion(node: Node): Finding | null {
  const children = node.children;
  if (children[1]?.type === '!' && !INDIRECT_LISTING.test(node.text)) {
    return { kind: 'dynamic', message: `indirect expansion \`${node.text}\``, at: node };
  }
  const colon = children.findIndex((c) => c?.type === ':');
  if (colon === -1) return null;
  const operands = children.slice(colon + 1).filter((c): c is Node => c?.isNamed === true);
  if (operands.some((c) => VARIABLE_REFERENCE.has(c.type) || containsType(c, VARIABLE_REFERENCE))) {
    return {
      kind: 'dynamic',
      message: `arithmetic on variables in the substring expansion \`${node.text}\``,
      at: node,
    };
  }
  return null;
}

/** `${v@P}`, `${v@E}`, …: a parameter transformation can re-evaluate text at run time. */
export function parameterTransformation(node: Node): Finding | null {
  if (!node.children.some((c) => c?.type === '@')) return null;
  return { kind: 'dynamic', message: `parameter transformation \`${node.text}\``, at: node };
}

/**
 * `x=([k]=v)` (an `array`): for an indexed array bash evaluates `k` as
 * arithmetic. Only numeric keys are judged (and any key of an array
 * declared `-A` here).
 */
export function compoundAssignment(node: Node): Finding[] {
  const declaration = node.parent?.parent;
  if (
    declaration?.type === 'declaration_command' &&
    declaration.namedChildren.some((c) => c?.type === 'word' && /^-[a-zA-Z]*A/.test(c.text))
  ) {
    return [];
  }
  const out: Finding[] = [];
  for (const element of node.namedChildren) {
    const key = element && /^\[([^\]]*)\]\+?=/.exec(element.text);
    if (key && !/^\s*-?\d+\s*$/.test(key[1]!)) {
      out.push({ kind: 'dynamic', message: `array key \`${key[0]}\` is evaluated at run time`, at: element });
    }
  }
  return out;
}

/**
 * Variables read in the arithmetic `node` of `root` (`$((…))`, `((…))`, a
 * `for ((…))` clause). Quotes do not protect there: see `quotedInArithmetic`.
 * One finding per variable reference reached (the walk reports each once).
 */
export function arithmeticOnVariables(root: Node, node: Node): Finding[] {
  const found: Finding = {
    kind: 'dynamic',
    message: `arithmetic on variables in \`${root.text}\``,
    at: root,
  };
  if (VARIABLE_REFERENCE.has(node.type)) return [found];
  const out: Finding[] = [];
  const visit = (at: Node): void => {
    for (const child of at.namedChildren) {
      if (!child) continue;
      if (VARIABLE_REFERENCE.has(child.type)) {
        out.push(found);
        return;
      }
      visit(child);
    }
  };
  visit(node);
  return out;
}

/** A `subscript` whose index is not a number, `@` or `*`: bash evaluates it. */
export function evaluatedSubscript(node: Node): Finding | null {
  const index = node.childForFieldName('index');
  if (!index) return null;
  if (index.type === 'number' || index.text === '@' || index.text === '*') return null;
  return { kind: 'dynamic', message: `array subscript \`${node.text}\` is evaluated at run time`, at: node };
}

/** A `test_command` (`[[ … ]]`) with `-v` or an arithmetic comparison evaluates its operands. */
export function evaluatingTest(node: Node): Finding[] {
  const operators: string[] = [];
  collectOperators(node, operators);
  if (!operators.includes('-v') && !operators.some((o) => ARITHMETIC_COMPARISON.has(o))) return [];
  const out: Finding[] = [];
  const quoted = quotedInArithmetic(node);
  if (quoted) out.push(quoted);
  const hasVariable =
    operators.includes('-v') || containsType(node, VARIABLE_REFERENCE) || containsType(node, QUOTED_STRINGS);
  if (hasVariable) {
    out.push({ kind: 'dynamic', message: `\`${node.text}\` evaluates arithmetic or subscripts`, at: node });
  }
  return out;
}

function collectOperators(node: Node, into: string[]): void {
  if (node.type === 'test_operator') into.push(node.text);
  for (const child of node.namedChildren) if (child) collectOperators(child, into);
}
