import type { Node } from 'web-tree-sitter';
import type { Redirection } from '../decision.js';
import type { Problem, Range } from './analysis.js';
import { fieldedChildren, groupNodes } from './syntax-nodes.js';
import { wordToken } from './words.js';

/**
 * Output redirections: which files a line opens for writing, as the engine
 * judges them against `writes:`. The bash manual's "Redirections"
 * (https://www.gnu.org/software/bash/manual/bash.html#Redirections) is the
 * reference for the operators and for when a target word is expanded.
 */

/** Redirection operators that open a file for writing (`>&` only when its target is not an fd). */
const OUTPUT_OPERATORS = new Set(['>', '>>', '>|', '&>', '&>>', '>&']);
/** Every operator token of a `file_redirect`. */
const REDIRECT_OPERATORS = new Set([...OUTPUT_OPERATORS, '<', '<&', '>&-', '<&-', '<>']);
/** `{name}` before a redirection: bash stores the fd it opens in `name`. */
const FD_VARIABLE = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

/** Where the redirections being read are: the wrappers around them, and the range to report for a node. */
export interface RedirectionContext {
  readonly via: readonly string[];
  readonly range: (node: Node) => Range;
}

/** The redirections of one statement: the files it writes, and the words tree-sitter read as extra targets. */
export interface StatementRedirects {
  readonly writes: readonly Redirection[];
  /** Destination words after the first (`echo a >f b`): bash reads them as arguments. */
  readonly words: readonly Node[];
}

export const NO_REDIRECTS: StatementRedirects = { writes: [], words: [] };

/**
 * The output redirections among `nodes` (`file_redirect`, and those inside
 * a `heredoc_redirect`), in order, with the destination words after the
 * first, which bash reads as arguments. A target whose file cannot be known
 * in advance is a write with `literal: false` and a `dynamic` problem.
 */
export function extractRedirections(
  nodes: readonly Node[],
  context: RedirectionContext,
): StatementRedirects & { readonly problems: readonly Problem[] } {
  const writes: Redirection[] = [];
  const words: Node[] = [];
  const problems: Problem[] = [];
  for (const node of nodes) {
    if (node.type === 'heredoc_redirect') {
      const inner = extractRedirections(
        node.namedChildren.filter((c): c is Node => c?.type === 'file_redirect'),
        context,
      );
      writes.push(...inner.writes);
      words.push(...inner.words);
      problems.push(...inner.problems);
      continue;
    }
    if (node.type !== 'file_redirect') continue;
    const destinations = fieldedChildren(node)
      .filter(([, f]) => f === 'destination')
      .map(([c]) => c);
    const [target, ...rest] = groupNodes(destinations);
    for (const group of rest) words.push(...group);
    const write = target ? redirection(node, target, context, problems) : null;
    if (write) writes.push(write);
  }
  return { writes, words, problems };
}

/** One `file_redirect` as a write, or null when it writes no file (input, fd duplication, `>(…)`). */
function redirection(
  node: Node,
  target: readonly Node[],
  context: RedirectionContext,
  problems: Problem[],
): Redirection | null {
  const operator = node.children.find(
    (c) => c !== null && !c.isNamed && REDIRECT_OPERATORS.has(c.type),
  )?.type;
  if (!operator || !OUTPUT_OPERATORS.has(operator)) return null;
  // `> >(cmd)`: a pipe to a process whose commands are judged like any other.
  if (target.length === 1 && target[0]!.type === 'process_substitution') return null;
  const token = wordToken(target);
  if (operator === '>&' && token.literal && /^(\d+-?|-)$/.test(token.text)) return null;
  if (token.literal && token.text === '') return null;
  const range = context.range(node);
  const descriptor = node.childForFieldName('descriptor')?.text ?? fdVariableBefore(node);
  const base = { operator, ...(descriptor ? { descriptor } : {}), range, via: context.via };
  const first = firstLeaf(target[0]!);
  const tilde = first.type === 'word' && first.text.startsWith('~');
  let why: string | null = null;
  if (!token.literal) {
    why =
      operator === '>&'
        ? 'is built from an expansion (it may name a file or an fd)'
        : 'is built from an expansion';
  } else if (token.glob) why = 'undergoes pathname expansion';
  else if (token.brace) why = 'undergoes brace expansion';
  else if (tilde && !/^~(\/|$)/.test(token.text)) why = 'starts with a tilde expansion other than `~`';
  if (why) {
    problems.push({
      kind: 'dynamic',
      message: `the redirection target \`${token.text}\` ${why}`,
      via: context.via,
      range,
    });
    return { ...base, target: token.text, literal: false, tilde: false };
  }
  return { ...base, target: token.text, literal: true, tilde };
}

/**
 * Words tree-sitter read as extra redirection targets where bash takes no
 * arguments (after a compound command or a function body): a syntax error
 * to bash, so the line is refused.
 */
export function extraWordsMessage(words: readonly Node[]): string {
  return `words after a redirection target (\`${words.map((w) => w.text).join(' ')}\`) where bash takes no arguments`;
}

/** The name in a `{name}` word written right before a redirection (`{fd}>f`), else null. */
export function fdVariable(word: Node): string | null {
  const name = FD_VARIABLE.exec(word.text)?.[1];
  if (!name) return null;
  const next = word.nextSibling ?? (word.parent?.type === 'command' ? word.parent.nextSibling : null);
  const redirect =
    next?.type === 'file_redirect' ||
    next?.type === 'heredoc_redirect' ||
    next?.type === 'herestring_redirect';
  return redirect && next.startIndex === word.endIndex ? name : null;
}

/** `{fd}` when a redirection is written right after such a word. */
function fdVariableBefore(redirect: Node): string | undefined {
  let prev = redirect.previousSibling;
  if (prev?.type === 'command') prev = prev.lastChild;
  return prev && fdVariable(prev) ? prev.text : undefined;
}

function firstLeaf(node: Node): Node {
  let at = node;
  while (at.type === 'concatenation' && at.firstChild) at = at.firstChild;
  return at;
}
