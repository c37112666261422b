import { basename } from 'node:path';
import type { Node, Tree } from 'web-tree-sitter';
import type { Redirection, SimpleCommand } from '../decision.js';
import {
  type Assignment,
  type LineAnalysis,
  literalToken,
  type Problem,
  type Range,
  type Token,
} from './analysis.js';
import { decodeAnsiC } from './ansi-c.js';
import { findQuotedDollar, QUOTED_STRINGS } from './arithmetic-quotes.js';
import { type BashParser, ParseBudgetError } from './bash-grammar.js';
import { reparseRequoted } from './heredoc-delimiters.js';
import { prelex } from './prelex.js';
import { assignedNames, dynamicReason } from './special-programs.js';
import { wordToken } from './words.js';
import { unwrap } from './wrappers.js';

/** Node kinds whose named children are walked as they are. */
const STRUCTURAL = new Set([
  'program',
  'list',
  'pipeline',
  'subshell',
  'compound_statement',
  'negated_command',
  'do_group',
  'if_statement',
  'elif_clause',
  'else_clause',
  'while_statement',
  'for_statement',
  'case_statement',
  'case_item',
  'binary_expression',
  'unary_expression',
  'parenthesized_expression',
  'ternary_expression',
  'postfix_expression',
  'string',
  'concatenation',
  'translated_string',
  'file_redirect',
  'herestring_redirect',
  'command_name',
  'simple_expansion',
]);

/** Node kinds with nothing executable inside. */
const LEAVES = new Set([
  'word',
  'number',
  'string_content',
  'raw_string',
  'ansi_c_string',
  'variable_name',
  'special_variable_name',
  'heredoc_start',
  'heredoc_end',
  'heredoc_content',
  'file_descriptor',
  'extglob_pattern',
  'regex',
  'test_operator',
  'comment',
  'brace_expression',
]);

/**
 * Leaves whose text bash still expands: an unescaped `$(`, `${` or backquote
 * in them is a parser gap. A `number` is one when tree-sitter reads a
 * base-N constant (`2#$(cmd)`) as a number: bash expands the word first.
 */
const EXPANDING_LEAVES = new Set([
  'word',
  'string_content',
  'extglob_pattern',
  'regex',
  'heredoc_content',
  'number',
]);

/** `via` labels for the constructs that introduce one. */
const VIA: Readonly<Record<string, string>> = {
  pipeline: 'pipeline',
  subshell: 'subshell',
  command_substitution: 'command_substitution',
  process_substitution: 'process_substitution',
};

const ARITHMETIC_COMPARISON = new Set(['-eq', '-ne', '-lt', '-le', '-gt', '-ge']);
const VARIABLE_REFERENCE = new Set([
  'simple_expansion',
  'expansion',
  'variable_name',
  'word',
  'command_substitution',
]);
const MAX_DEPTH = 8;
/**
 * Bash reserved words (less `time` and `coproc`, judged as wrappers). The
 * grammar has no `time` keyword and mis-reads `! if …`, so after `!` or `time`
 * a compound command comes back as simple commands named `{`, `if`, `then`, …
 * whose bodies would be judged as arguments. Such a command name is refused.
 */
const RESERVED_WORDS = new Set([
  '!',
  'case',
  'do',
  'done',
  'elif',
  'else',
  'esac',
  'fi',
  'for',
  'function',
  'if',
  'in',
  'select',
  'then',
  'until',
  'while',
  '{',
  '}',
  '[[',
  ']]',
]);
/** `${!prefix*}`, `${!prefix@}`, `${!array[@]}`: list names or keys, evaluate nothing. */
const INDIRECT_LISTING = /^\$\{![A-Za-z_][A-Za-z0-9_]*([*@]|\[[*@]\])\}$/;

interface Scope {
  readonly via: readonly string[];
  /** Functions defined in the text being walked. */
  readonly functions: ReadonlySet<string>;
  /** For nested strings (`bash -c '…'`): the range of the string in the judged line. */
  readonly outerRange?: Range;
  readonly depth: number;
  /** Inside `find -exec`/`xargs -I`: the placeholder replaced with run-time input. */
  readonly replace?: string;
  /** Output redirections of enclosing compound commands (`{ …; } > f`), attached to the commands inside. */
  readonly redirects?: readonly Redirection[];
  /** The command being emitted gets run-time words appended to its argv (run by `xargs`). */
  readonly appendsInput?: boolean;
}

/** What a `redirected_statement` hands its body command: its writes, and words tree-sitter read as targets. */
interface StatementRedirects {
  readonly writes: readonly Redirection[];
  readonly words: readonly Node[];
}

const NO_REDIRECTS: StatementRedirects = { writes: [], words: [] };

/** Redirection operators that open a file for writing (`>&` only when its target is not an fd). */
const OUTPUT_OPERATORS = new Set(['>', '>>', '>|', '&>', '&>>', '>&']);
/** Every operator token of a `file_redirect`. */
const REDIRECT_OPERATORS = new Set([...OUTPUT_OPERATORS, '<', '<&', '>&-', '<&-', '<>']);
/** `{name}` before a redirection: bash stores the fd it opens in `name`. */
const FD_VARIABLE = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

/**
 * Finds every simple command a bash line would run, using tree-sitter-bash
 * behind an allowlist of node kinds (PEERS §5). Whatever it cannot model is
 * reported as a `Problem` rather than guessed. Synchronous; never throws for
 * any input string.
 */
export class ShellAnalyzer {
  constructor(private readonly parser: BashParser) {}

  /** Analyzes a command line as `bash -c LINE` would run it. */
  analyzeLine(line: string): LineAnalysis {
    const walk = new Extraction(this.parser);
    if (tooLong(line.length, walk)) return walk.result();
    walk.text(line, { via: [], functions: new Set(), depth: 0 });
    return walk.result();
  }

  /** Analyzes an argv request (no shell): one command, wrappers unwrapped, `bash -c` strings parsed. */
  analyzeArgv(argv: readonly string[]): LineAnalysis {
    const walk = new Extraction(this.parser);
    if (
      tooLong(
        argv.reduce((n, a) => n + a.length + 1, 0),
        walk,
      )
    )
      return walk.result();
    walk.emit(
      argv.map((a) => literalToken(a)),
      undefined,
      { via: [], functions: new Set(), depth: 0 },
    );
    return walk.result();
  }
}

/**
 * Longest line (or argv, summed) judged, in UTF-16 code units. Linux refuses
 * a single exec argument over 128 KiB (MAX_ARG_STRLEN), so `bash -c LINE`
 * could not run a longer line anyway, and judging one costs about a second.
 */
export const MAX_LINE_LENGTH = 128 * 1024;

/**
 * tree-sitter-bash's error recovery is quadratic in the stages of a
 * pipeline: 6,000 `a|` stages ending in a syntax error take 0.5 s and
 * 600 MB in one parser step (no cancellation point), and about 40,000
 * abort the wasm module for good. Lines with more `|` are not parsed.
 */
export const MAX_PIPES = 1000;

function countOf(text: string, ch: string): number {
  let n = 0;
  for (let i = text.indexOf(ch); i !== -1; i = text.indexOf(ch, i + 1)) n++;
  return n;
}

/** Children with their field names, in one pass (`node.child(i)` walks from the first child each time). */
function fieldedChildren(node: Node): [Node, string | null][] {
  const out: [Node, string | null][] = [];
  const cursor = node.walk();
  try {
    if (cursor.gotoFirstChild()) {
      do out.push([cursor.currentNode, cursor.currentFieldName]);
      while (cursor.gotoNextSibling());
    }
  } finally {
    cursor.delete();
  }
  return out;
}

function tooLong(length: number, walk: Extraction): boolean {
  if (length <= MAX_LINE_LENGTH) return false;
  walk.refuse(`a command of ${length} characters (the limit is ${MAX_LINE_LENGTH})`);
  return true;
}

class Extraction {
  private readonly commands: SimpleCommand[] = [];
  private readonly words: (readonly Token[])[] = [];
  private readonly problems: Problem[] = [];
  private readonly assignments: Assignment[] = [];
  private readonly redirects: Redirection[] = [];

  constructor(private readonly parser: BashParser) {}

  result(): LineAnalysis {
    const seen = new Set<string>();
    const problems = this.problems.filter((p) => {
      const key = `${p.kind}|${p.message}|${p.range?.join('-')}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    // A statement's redirections are read before its body: restore source order.
    const redirects = [...this.redirects].sort((x, y) => (x.range?.[0] ?? 0) - (y.range?.[0] ?? 0));
    return { commands: this.commands, words: this.words, problems, assignments: this.assignments, redirects };
  }

  /** Records a line-level `unparseable` problem. */
  refuse(message: string): void {
    this.problems.push({ kind: 'unparseable', message, via: [] });
  }

  /** Parses and walks a piece of shell source. */
  text(source: string, scope: Scope): void {
    if (scope.depth > MAX_DEPTH) {
      this.problem(scope, 'unparseable', 'commands nested too deeply', scope.outerRange);
      return;
    }
    if (countOf(source, '|') > MAX_PIPES) {
      this.problem(scope, 'unparseable', `more than ${MAX_PIPES} \`|\` characters`, scope.outerRange);
      return;
    }
    for (const p of prelex(source, scope.via)) {
      this.problems.push(scope.outerRange ? { ...p, range: scope.outerRange } : p);
    }
    let tree: Tree;
    try {
      tree = this.parser.parse(source);
    } catch (error) {
      if (!(error instanceof ParseBudgetError)) throw error;
      this.problem(scope, 'unparseable', error.message, scope.outerRange);
      return;
    }
    tree = reparseRequoted(this.parser, source, tree);
    try {
      const root = tree.rootNode;
      if (root.hasError) {
        const bad = firstError(root);
        this.problem(
          scope,
          'unparseable',
          bad?.isMissing ? `syntax error: missing \`${bad.type}\`` : 'syntax error',
          bad ? this.range(bad, scope) : undefined,
        );
      }
      const functions = new Set<string>();
      // A definition needs `()` or the `function` keyword; skip the extra tree walk otherwise.
      if (source.includes(')') || source.includes('function')) collectFunctions(root, functions);
      this.walk(root, { ...scope, functions });
    } finally {
      tree.delete();
    }
  }

  private walk(node: Node, scope: Scope): void {
    if (!node.isNamed) return;
    switch (node.type) {
      case 'command':
        this.command(node, scope);
        return;
      case 'declaration_command':
      case 'unset_command':
        this.declaration(node, scope);
        return;
      case 'variable_assignment':
        this.assignment(node, scope);
        return;
      case 'function_definition': {
        const name = node.childForFieldName('name')?.text ?? '?';
        const inner = { ...scope, via: [...scope.via, `function ${name}`] };
        const redirects = fieldedChildren(node)
          .filter(([c, f]) => f === 'redirect' && c.isNamed)
          .map(([c]) => c);
        const { writes, words } = this.redirections(redirects, inner);
        if (words.length > 0) this.extraWords(words, scope);
        this.children(node, writes.length > 0 ? withRedirects(inner, writes) : inner);
        return;
      }
      case 'redirected_statement':
        this.redirectedStatement(node, scope);
        return;
      case 'command_substitution':
        if (node.text.startsWith('`') && node.text.slice(1, -1).includes('`')) {
          // `a``b`: bash runs two substitutions; tree-sitter reads one.
          this.problem(
            scope,
            'unparseable',
            'adjacent backquote substitutions (bash runs each; the parser reads one)',
            this.range(node, scope),
          );
        }
        if (node.text.startsWith('`') && node.text.slice(1, -1).includes('\\')) {
          this.problem(
            scope,
            'unparseable',
            'a backslash inside backquotes (bash re-reads it there; the parser does not)',
            this.range(node, scope),
          );
        }
        this.children(node, { ...withoutRedirects(scope), via: [...scope.via, 'command_substitution'] });
        return;
      case 'process_substitution':
        this.children(node, { ...withoutRedirects(scope), via: [...scope.via, 'process_substitution'] });
        return;
      case 'heredoc_redirect':
        this.heredoc(node, scope);
        return;
      case 'arithmetic_expansion':
        this.quotedInArithmetic(node, scope);
        this.arithmetic(node, node, scope);
        this.children(node, scope);
        return;
      case 'c_style_for_statement':
        for (const part of node.namedChildren) {
          if (part && part.type !== 'do_group' && part.type !== 'compound_statement') {
            this.quotedInArithmetic(part, scope);
            this.arithmetic(node, part, scope);
          }
        }
        this.children(node, scope);
        return;
      case 'expansion':
        this.quotedInExpansion(node, node, scope);
        this.evaluatedExpansion(node, scope);
        if (node.children.some((c) => c?.type === '@')) {
          this.problem(
            scope,
            'dynamic',
            `parameter transformation \`${node.text}\``,
            this.range(node, scope),
          );
        }
        this.children(node, scope);
        return;
      case 'subscript':
        this.subscript(node, scope);
        this.children(node, scope);
        return;
      case 'array':
        this.compoundAssignment(node, scope);
        this.children(node, scope);
        return;
      case 'test_command':
        this.test(node, scope);
        this.children(node, scope);
        return;
      case 'ERROR':
        this.children(node, scope);
        return;
    }
    if (node.type === 'compound_statement' && node.firstChild?.type === '((') {
      this.quotedInArithmetic(node, scope);
      this.arithmetic(node, node, scope);
    }
    if (STRUCTURAL.has(node.type)) {
      const label = VIA[node.type];
      this.children(node, label ? { ...scope, via: [...scope.via, label] } : scope);
      return;
    }
    if (LEAVES.has(node.type)) {
      if (EXPANDING_LEAVES.has(node.type) && hasActiveSubstitution(node.text)) {
        this.problem(
          scope,
          'unparseable',
          `the parser read \`${node.text}\` as plain text, but bash would expand it`,
          this.range(node, scope),
        );
      }
      return;
    }
    this.problem(
      scope,
      'unparseable',
      `unsupported shell construct \`${node.type}\``,
      this.range(node, scope),
    );
  }

  private children(node: Node, scope: Scope): void {
    for (const child of node.namedChildren) if (child) this.walk(child, scope);
  }

  /**
   * A command, compound command or function body with redirections. Words
   * tree-sitter reads as extra targets (`echo a >f b`) are arguments of a
   * simple command to bash, and a syntax error after a compound command.
   */
  private redirectedStatement(node: Node, scope: Scope): void {
    const parts = fieldedChildren(node).filter(([c]) => c.isNamed);
    const redirects = parts.filter(([, f]) => f === 'redirect').map(([c]) => c);
    const statement = this.redirections(redirects, scope);
    const body = parts.find(([, f]) => f === 'body')?.[0];
    if (statement.words.length > 0 && body?.type !== 'command') this.extraWords(statement.words, scope);
    for (const [child, field] of parts) {
      if (field !== 'body') this.walk(child, scope);
      else if (child.type === 'command') this.command(child, scope, statement);
      else this.walk(child, statement.writes.length > 0 ? withRedirects(scope, statement.writes) : scope);
    }
  }

  private extraWords(words: readonly Node[], scope: Scope): void {
    this.problem(
      scope,
      'unparseable',
      `words after a redirection target (\`${words.map((w) => w.text).join(' ')}\`) where bash takes no arguments`,
      this.range(words[0]!, scope),
    );
  }

  /**
   * The output redirections among `nodes` (`file_redirect`, and those inside
   * a `heredoc_redirect`), recorded for the line. Returns them and the
   * destination words after the first, which bash reads as arguments.
   */
  private redirections(nodes: readonly Node[], scope: Scope): StatementRedirects {
    const writes: Redirection[] = [];
    const words: Node[] = [];
    for (const node of nodes) {
      if (node.type === 'heredoc_redirect') {
        const inner = this.redirections(
          node.namedChildren.filter((c): c is Node => c?.type === 'file_redirect'),
          scope,
        );
        writes.push(...inner.writes);
        words.push(...inner.words);
        continue;
      }
      if (node.type !== 'file_redirect') continue;
      const destinations = fieldedChildren(node)
        .filter(([, f]) => f === 'destination')
        .map(([c]) => c);
      const [target, ...rest] = groupNodes(destinations);
      for (const group of rest) words.push(...group);
      const write = target ? this.redirection(node, target, scope) : null;
      if (write) {
        writes.push(write);
        this.redirects.push(write);
      }
    }
    return { writes, words };
  }

  /** One `file_redirect` as a write, or null when it writes no file (input, fd duplication, `>(…)`). */
  private redirection(node: Node, target: readonly Node[], scope: Scope): Redirection | null {
    const operator = node.children.find(
      (c) => c !== null && !c.isNamed && REDIRECT_OPERATORS.has(c.type),
    )?.type;
    if (!operator || !OUTPUT_OPERATORS.has(operator)) return null;
    // `> >(cmd)`: a pipe to a process whose commands are judged like any other.
    if (target.length === 1 && target[0]!.type === 'process_substitution') return null;
    const token = wordToken(target);
    if (operator === '>&' && token.literal && /^(\d+-?|-)$/.test(token.text)) return null;
    if (token.literal && token.text === '') return null;
    const range = this.range(node, scope);
    const descriptor = node.childForFieldName('descriptor')?.text ?? fdVariableBefore(node);
    const base = { operator, ...(descriptor ? { descriptor } : {}), range, via: scope.via };
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
      this.problem(scope, 'dynamic', `the redirection target \`${token.text}\` ${why}`, range);
      return { ...base, target: token.text, literal: false, tilde: false };
    }
    return { ...base, target: token.text, literal: true, tilde };
  }

  private command(node: Node, scope: Scope, statement: StatementRedirects = NO_REDIRECTS): void {
    const words: Node[] = [...statement.words];
    const nested: Node[] = [];
    const redirects: Node[] = [];
    for (const [child, field] of fieldedChildren(node)) {
      if (field === 'name') {
        for (const part of child.namedChildren) if (part && !part.isMissing) words.push(part);
      } else if (field === 'argument' || child.type === '$') {
        const fd = fdVariable(child);
        if (fd) {
          // `{fd}>f`: not an argument; bash assigns the opened fd to the variable.
          this.assignments.push({ name: fd, range: this.range(child, scope), via: scope.via });
          continue;
        }
        words.push(child);
      } else if (child.type === 'variable_assignment') {
        this.assignment(child, scope);
        continue;
      } else if (field === 'redirect') {
        redirects.push(child);
      }
      nested.push(child);
    }
    const own = this.redirections(redirects, scope);
    words.push(...own.words);
    words.sort((a, b) => a.startIndex - b.startIndex);
    const writes = [...(scope.redirects ?? []), ...statement.writes, ...own.writes];
    // The command first, then what its words run (in source order of their start).
    if (words.length > 0) {
      this.emit(
        groupWords(words),
        this.range(node, scope),
        writes.length > 0 ? { ...scope, redirects: writes } : scope,
      );
    }
    const inner = withoutRedirects(scope);
    for (const child of nested) this.walk(child, inner);
  }

  /**
   * Records one simple command and, for wrappers, what it runs. Public for
   * argv requests, which have no shell source.
   */
  emit(argv: readonly Token[], range: Range | undefined, scope: Scope): void {
    const program = argv[0];
    if (!program) return;
    const at = range ?? program.range;
    if (!program.literal || program.glob || program.brace || program.text === '') {
      const why = !program.literal
        ? 'is built from an expansion'
        : program.text === ''
          ? 'is empty'
          : 'undergoes pathname or brace expansion';
      this.problem(scope, 'dynamic', `the command name \`${program.text}\` ${why}`, at);
      return;
    }
    if (RESERVED_WORDS.has(program.text)) {
      this.problem(
        scope,
        'unparseable',
        `the reserved word \`${program.text}\` in command position (the parser did not read it as syntax)`,
        at,
      );
      return;
    }
    if (scope.replace && program.text.includes(scope.replace)) {
      this.problem(
        scope,
        'dynamic',
        `the command name \`${program.text}\` holds the find -exec/xargs -I placeholder \`${scope.replace}\` (run-time input)`,
        at,
      );
      return;
    }
    const braced = argv.find((t) => t.brace);
    if (braced) {
      this.problem(scope, 'dynamic', `brace expansion in \`${braced.text}\` changes the argument list`, at);
    }
    const command: SimpleCommand = {
      program: program.text,
      argv: argv.map((t) => t.text),
      ...(at ? { range: at } : {}),
      via: scope.via,
      ...(scope.redirects && scope.redirects.length > 0 ? { redirects: scope.redirects } : {}),
    };
    this.commands.push(command);
    this.words.push(argv);
    const name = basename(program.text);
    if (scope.functions.has(program.text)) {
      this.problem(scope, 'dynamic', `\`${program.text}\` calls a function defined in this line`, at);
    }
    const dynamic = dynamicReason(name, argv);
    if (dynamic) this.problem(scope, 'dynamic', dynamic, at);
    for (const assigned of assignedNames(
      name,
      argv.slice(1).map((t) => t.text),
    )) {
      this.assignments.push({ name: assigned, ...(at ? { range: at } : {}), via: scope.via });
    }
    if (scope.depth >= MAX_DEPTH) {
      this.problem(scope, 'unparseable', 'wrappers nested too deeply', at);
      return;
    }
    const wrapped = unwrap(name, argv);
    if (!wrapped) return;
    const { appendsInput: _, ...outer } = scope;
    const inner: Scope = {
      ...outer,
      via: [...scope.via, wrapped.via],
      depth: scope.depth + 1,
      ...(wrapped.replace ? { replace: wrapped.replace } : {}),
      ...(wrapped.appendsInput || scope.appendsInput ? { appendsInput: true } : {}),
    };
    if (wrapped.problem) this.problem(scope, 'unparseable', wrapped.problem, at);
    if (wrapped.dynamic) this.problem(scope, 'dynamic', wrapped.dynamic, at);
    if (scope.appendsInput && wrapped.commandless) {
      this.problem(
        scope,
        'dynamic',
        `\`${scope.via.at(-1) ?? 'xargs'}\` appends run-time input to \`${argv.map((t) => t.text).join(' ')}\`, which may take it as a command to run`,
        at,
      );
    }
    for (const a of wrapped.assignments) {
      const assigned = a.text.slice(0, a.text.indexOf('='));
      if (inner.replace && assigned.includes(inner.replace)) {
        this.problem(
          scope,
          'dynamic',
          `the variable name \`${assigned}\` holds the placeholder \`${inner.replace}\` (run-time input)`,
          at,
        );
      }
      this.assignments.push({
        name: a.text.slice(0, a.text.indexOf('=')),
        ...(at ? { range: at } : {}),
        via: inner.via,
      });
    }
    for (const run of wrapped.run) this.emit(run, at, inner);
    for (const script of wrapped.scripts) {
      if (inner.replace && script.text.includes(inner.replace)) {
        this.problem(
          scope,
          'dynamic',
          `the ${wrapped.via} string \`${script.text}\` has \`${inner.replace}\` replaced with run-time input`,
          at,
        );
        continue;
      }
      if (!script.literal) {
        this.problem(
          scope,
          'dynamic',
          `the ${wrapped.via} string \`${script.text}\` is built from an expansion`,
          at,
        );
        continue;
      }
      const { appendsInput: __, ...source } = inner;
      this.text(script.text, { ...source, functions: new Set(), ...(at ? { outerRange: at } : {}) });
    }
  }

  /** `export A=1 B`, `declare -x C=…`, `local y`, `unset X`. */
  private declaration(node: Node, scope: Scope): void {
    const argv: Token[] = [literalToken(node.firstChild?.text ?? 'declare')];
    const exporting = node.firstChild?.text === 'export' || /-[a-zA-Z]*x/.test(node.text);
    for (const child of node.namedChildren) {
      if (!child) continue;
      if (child.type === 'variable_assignment') {
        this.assignment(child, scope);
        argv.push({ ...wordToken([child]), text: child.text });
      } else {
        if (child.type === 'variable_name' && exporting) {
          this.assignments.push({ name: child.text, range: this.range(child, scope), via: scope.via });
        }
        this.walk(child, scope);
        argv.push(wordToken([child]));
      }
    }
    this.emit(argv, this.range(node, scope), scope);
  }

  private assignment(node: Node, scope: Scope): void {
    const target = node.childForFieldName('name') ?? node.firstNamedChild;
    const name =
      target?.type === 'subscript' ? (target.childForFieldName('name')?.text ?? target.text) : target?.text;
    if (name) this.assignments.push({ name, range: this.range(node, scope), via: scope.via });
    for (const child of node.namedChildren) if (child) this.walk(child, scope);
  }

  /**
   * A here-document. With a quoted delimiter (`<<'EOF'`, `<<"EOF"`, `<<E\OF`)
   * the body is literal. Otherwise bash expands it, and tree-sitter-bash
   * misses substitutions in some bodies (backquotes, tab-indented lines), so
   * unless every `$(`/backquote in the body was modeled the line is refused.
   */
  private heredoc(node: Node, scope: Scope): void {
    const start = node.namedChildren.find((c) => c?.type === 'heredoc_start')?.text ?? '';
    const quoted = /['"\\]/.test(start);
    for (const child of node.namedChildren) {
      if (!child || child.type === 'heredoc_start' || child.type === 'heredoc_end') continue;
      if (child.type !== 'heredoc_body') {
        this.walk(child, scope);
        continue;
      }
      if (quoted) continue;
      const written = countSubstitutions(child.text);
      const modeled = { dollar: 0, backquote: 0 };
      countModeled(child, modeled);
      if (written.dollar > modeled.dollar || written.backquote > modeled.backquote) {
        this.problem(
          scope,
          'unparseable',
          "a here-document body with substitutions the parser did not model (quote the delimiter: <<'EOF')",
          this.range(child, scope),
        );
      }
      this.children(child, { ...scope, via: [...scope.via, 'heredoc'] });
    }
  }

  /**
   * Inside a double-quoted `"${x:-'…'}"` (also `:=`, `+`, …) bash keeps the
   * single quotes as characters and still expands what they enclose, and it
   * decodes `$'…'` there and expands the result; tree-sitter-bash reads
   * both as literal strings. A quoted string in `${…}` that holds (or
   * decodes to) a `$` or backquote is refused.
   */
  private quotedInExpansion(root: Node, node: Node, scope: Scope): void {
    for (const child of node.namedChildren) {
      if (!child) continue;
      if (child.type === 'raw_string' || child.type === 'ansi_c_string') {
        const decoded = child.type === 'ansi_c_string' ? decodeAnsiC(child.text.slice(2, -1)) : '';
        if (/[$`]/.test(child.text) || decoded === null || /[$`]/.test(decoded)) {
          this.problem(
            scope,
            'unparseable',
            `a quoted string in \`${root.text}\` that bash may expand (the parser reads it as literal)`,
            this.range(child, scope),
          );
        }
      } else {
        this.quotedInExpansion(root, child, scope);
      }
    }
  }

  /**
   * Expansions that evaluate a variable's value as an arithmetic expression
   * or a name with a subscript, so `y='a[$(cmd)]'` set earlier runs cmd:
   * substring offsets (`${x:y}`, `${x:0:y}`) and indirection (`${!y}`).
   */
  private evaluatedExpansion(node: Node, scope: Scope): void {
    const children = node.children;
    if (children[1]?.type === '!' && !INDIRECT_LISTING.test(node.text)) {
      this.problem(scope, 'dynamic', `indirect expansion \`${node.text}\``, this.range(node, scope));
      return;
    }
    const colon = children.findIndex((c) => c?.type === ':');
    if (colon === -1) return;
    const operands = children.slice(colon + 1).filter((c): c is Node => c?.isNamed === true);
    if (operands.some((c) => VARIABLE_REFERENCE.has(c.type) || containsType(c, VARIABLE_REFERENCE))) {
      this.problem(
        scope,
        'dynamic',
        `arithmetic on variables in the substring expansion \`${node.text}\``,
        this.range(node, scope),
      );
    }
  }

  /**
   * `x=([k]=v)`: for an indexed array bash evaluates `k` as arithmetic. Only
   * numeric keys are judged (and any key of an array declared `-A` here).
   */
  private compoundAssignment(node: Node, scope: Scope): void {
    const declaration = node.parent?.parent;
    if (
      declaration?.type === 'declaration_command' &&
      declaration.namedChildren.some((c) => c?.type === 'word' && /^-[a-zA-Z]*A/.test(c.text))
    ) {
      return;
    }
    for (const element of node.namedChildren) {
      const key = element && /^\[([^\]]*)\]\+?=/.exec(element.text);
      if (key && !/^\s*-?\d+\s*$/.test(key[1]!)) {
        this.problem(
          scope,
          'dynamic',
          `array key \`${key[0]}\` is evaluated at run time`,
          this.range(element, scope),
        );
      }
    }
  }

  /**
   * Arithmetic evaluates variables recursively, so a variable holding
   * `a[$(cmd)]` runs cmd. Quotes do not protect in arithmetic: bash expands
   * `$(cmd)` inside `'…'` there (`$(( 'a[$(cmd)]' ))`), and the parser reads
   * the string as literal.
   */
  private arithmetic(root: Node, node: Node, scope: Scope): void {
    if (VARIABLE_REFERENCE.has(node.type)) {
      this.problem(scope, 'dynamic', `arithmetic on variables in \`${root.text}\``, this.range(root, scope));
      return;
    }
    for (const child of node.namedChildren) {
      if (!child) continue;
      if (VARIABLE_REFERENCE.has(child.type)) {
        this.problem(
          scope,
          'dynamic',
          `arithmetic on variables in \`${root.text}\``,
          this.range(root, scope),
        );
        return;
      }
      this.arithmetic(root, child, scope);
    }
  }

  /** A single-quoted or `$'…'` string with a `$` or backquote in an arithmetic context: bash expands it. */
  private quotedInArithmetic(node: Node, scope: Scope): void {
    const quoted = findQuotedDollar(node);
    if (quoted) {
      this.problem(
        scope,
        'unparseable',
        `a quoted string \`${quoted.text}\` evaluated as arithmetic (bash expands what it holds; the parser does not)`,
        this.range(quoted, scope),
      );
    }
  }

  private subscript(node: Node, scope: Scope): void {
    const index = node.childForFieldName('index');
    if (!index) return;
    if (index.type === 'number' || index.text === '@' || index.text === '*') return;
    this.problem(
      scope,
      'dynamic',
      `array subscript \`${node.text}\` is evaluated at run time`,
      this.range(node, scope),
    );
  }

  private test(node: Node, scope: Scope): void {
    const operators: string[] = [];
    collectOperators(node, operators);
    if (operators.includes('-v') || operators.some((o) => ARITHMETIC_COMPARISON.has(o))) {
      this.quotedInArithmetic(node, scope);
      const hasVariable =
        operators.includes('-v') ||
        containsType(node, VARIABLE_REFERENCE) ||
        containsType(node, QUOTED_STRINGS);
      if (hasVariable) {
        this.problem(
          scope,
          'dynamic',
          `\`${node.text}\` evaluates arithmetic or subscripts`,
          this.range(node, scope),
        );
      }
    }
  }

  private problem(scope: Scope, kind: Problem['kind'], message: string, range: Range | undefined): void {
    this.problems.push({ kind, message, via: scope.via, ...(range ? { range } : {}) });
  }

  private range(node: Node, scope: Scope): Range {
    return scope.outerRange ?? [node.startIndex, node.endIndex];
  }
}

/** Adjacent word nodes with nothing between them are one shell word (`$"…"`). */
function groupWords(nodes: readonly Node[]): Token[] {
  return groupNodes(nodes).map((g) => wordToken(g));
}

function groupNodes(nodes: readonly Node[]): Node[][] {
  const groups: Node[][] = [];
  for (const node of nodes) {
    const last = groups[groups.length - 1];
    const prev = last?.[last.length - 1];
    if (last && prev && prev.endIndex === node.startIndex) last.push(node);
    else groups.push([node]);
  }
  return groups;
}

function withRedirects(scope: Scope, writes: readonly Redirection[]): Scope {
  return { ...scope, redirects: [...(scope.redirects ?? []), ...writes] };
}

function withoutRedirects(scope: Scope): Scope {
  if (!scope.redirects) return scope;
  const { redirects: _, ...rest } = scope;
  return rest;
}

function firstLeaf(node: Node): Node {
  let at = node;
  while (at.type === 'concatenation' && at.firstChild) at = at.firstChild;
  return at;
}

/** The name in a `{name}` word written right before a redirection (`{fd}>f`), else null. */
function fdVariable(word: Node): string | null {
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

function firstError(node: Node): Node | null {
  if (node.type === 'ERROR' || node.isMissing) return node;
  for (const child of node.children) {
    if (child?.hasError || child?.isMissing) {
      const found = firstError(child);
      if (found) return found;
    }
  }
  return null;
}

function collectFunctions(node: Node, into: Set<string>): void {
  if (node.type === 'function_definition') {
    const name = node.childForFieldName('name');
    if (name) into.add(wordToken([name]).text);
  }
  for (const child of node.namedChildren) if (child) collectFunctions(child, into);
}

function collectOperators(node: Node, into: string[]): void {
  if (node.type === 'test_operator') into.push(node.text);
  for (const child of node.namedChildren) if (child) collectOperators(child, into);
}

function containsType(node: Node, types: ReadonlySet<string>): boolean {
  return node.namedChildren.some((c) => c !== null && (types.has(c.type) || containsType(c, types)));
}

/** Unescaped `$(` (incl. `$((`) and backquote pairs written in a here-document body. */
function countSubstitutions(text: string): { dollar: number; backquote: number } {
  let dollar = 0;
  let backquotes = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\\') i++;
    else if (ch === '$' && text[i + 1] === '(') dollar++;
    else if (ch === '`') backquotes++;
  }
  return { dollar, backquote: Math.ceil(backquotes / 2) };
}

function countModeled(node: Node, into: { dollar: number; backquote: number }): void {
  for (const child of node.namedChildren) {
    if (!child) continue;
    if (child.type === 'command_substitution' || child.type === 'arithmetic_expansion') {
      if (child.text.startsWith('`')) into.backquote++;
      else into.dollar++;
    }
    countModeled(child, into);
  }
}

/** An unescaped backquote, `$(`, `${` or `$[` (something bash would expand). */
function hasActiveSubstitution(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\\') i++;
    else if (ch === '`') return true;
    else if (ch === '$' && (text[i + 1] === '(' || text[i + 1] === '{' || text[i + 1] === '[')) return true;
  }
  return false;
}
