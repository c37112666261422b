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
import {
  backquoteMisreadings,
  plainTextExpansion,
  quotedInArithmetic,
  quotedInExpansion,
  reservedWordMessage,
  unmodeledHeredocSubstitutions,
} from './bash-disagreements.js';
import { type BashParser, ParseBudgetError } from './bash-grammar.js';
import { reparseRequoted } from './heredoc-delimiters.js';
import { LEAVES, STRUCTURAL, VIA } from './node-kinds.js';
import { prelex } from './prelex.js';
import {
  extractRedirections,
  extraWordsMessage,
  fdVariable,
  NO_REDIRECTS,
  type StatementRedirects,
} from './redirections.js';
import {
  arithmeticOnVariables,
  compoundAssignment,
  evaluatedExpansion,
  evaluatedSubscript,
  evaluatingTest,
  parameterTransformation,
} from './run-time-evaluation.js';
import { assignedNames, dynamicReason } from './special-programs.js';
import { type Finding, fieldedChildren, groupNodes } from './syntax-nodes.js';
import { wordToken } from './words.js';
import { unwrap } from './wrappers.js';

/**
 * The walk: finds every simple command a piece of bash would run, by walking
 * the tree-sitter-bash syntax tree behind an allowlist of node kinds, with
 * the wrappers they run, the variables they assign and the files they
 * redirect output to. Node kinds outside the allowlist, and what the checks
 * in `bash-disagreements.ts` and `run-time-evaluation.ts` find, are recorded
 * as problems rather than guessed.
 */

/** How deeply strings run by wrappers (`bash -c '…'`) and wrappers themselves may nest. */
const MAX_DEPTH = 8;

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

/** Where the walk is: what encloses the node being walked. */
export interface Scope {
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
  /** Inside `xargs -I R`: R, which xargs replaces with its input (any words). */
  readonly xargsReplace?: string;
}

/**
 * One walk over a line (or an argv): `text` and `emit` record into it,
 * `result` returns what was found. Never throws for any input string.
 */
export class ShellWalk {
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
      case 'for_statement': {
        // `for NAME in …` (and `select`) assigns NAME: `for PATH in /tmp; do ls; done` sets PATH.
        const variable = node.childForFieldName('variable');
        if (variable)
          this.assignments.push({ name: variable.text, range: this.range(variable, scope), via: scope.via });
        const label = VIA[node.type];
        this.children(node, label ? { ...scope, via: [...scope.via, label] } : scope);
        return;
      }
      case 'command_substitution':
        this.findings(backquoteMisreadings(node), scope);
        this.children(node, { ...withoutRedirects(scope), via: [...scope.via, 'command_substitution'] });
        return;
      case 'process_substitution':
        this.children(node, { ...withoutRedirects(scope), via: [...scope.via, 'process_substitution'] });
        return;
      case 'heredoc_redirect':
        this.heredoc(node, scope);
        return;
      case 'arithmetic_expansion':
        this.findings([quotedInArithmetic(node), ...arithmeticOnVariables(node, node)], scope);
        this.children(node, scope);
        return;
      case 'c_style_for_statement':
        for (const part of node.namedChildren) {
          if (part && part.type !== 'do_group' && part.type !== 'compound_statement') {
            this.findings([quotedInArithmetic(part), ...arithmeticOnVariables(node, part)], scope);
          }
        }
        this.children(node, scope);
        return;
      case 'expansion':
        this.findings(
          [...quotedInExpansion(node), evaluatedExpansion(node), parameterTransformation(node)],
          scope,
        );
        this.children(node, scope);
        return;
      case 'subscript':
        this.findings([evaluatedSubscript(node)], scope);
        this.children(node, scope);
        return;
      case 'array':
        this.findings(compoundAssignment(node), scope);
        this.children(node, scope);
        return;
      case 'test_command':
        this.findings(evaluatingTest(node), scope);
        this.children(node, scope);
        return;
      case 'ERROR':
        this.children(node, scope);
        return;
    }
    if (node.type === 'compound_statement' && node.firstChild?.type === '((') {
      this.findings([quotedInArithmetic(node), ...arithmeticOnVariables(node, node)], scope);
    }
    if (STRUCTURAL.has(node.type)) {
      const label = VIA[node.type];
      this.children(node, label ? { ...scope, via: [...scope.via, label] } : scope);
      return;
    }
    if (LEAVES.has(node.type)) {
      this.findings([plainTextExpansion(node)], scope);
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
    this.problem(scope, 'unparseable', extraWordsMessage(words), this.range(words[0]!, scope));
  }

  /** The output redirections among `nodes`, recorded for the line (see `extractRedirections`). */
  private redirections(nodes: readonly Node[], scope: Scope): StatementRedirects {
    const found = extractRedirections(nodes, { via: scope.via, range: (node) => this.range(node, scope) });
    this.problems.push(...found.problems);
    this.redirects.push(...found.writes);
    return found;
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
        this.assignment(child, scope, true);
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
    const misread = reservedWordMessage(program.text);
    if (misread) {
      this.problem(scope, 'unparseable', misread, at);
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
      ...runTimeInput(scope, argv),
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
      ...(wrapped.replace && wrapped.via === 'xargs' ? { xargsReplace: wrapped.replace } : {}),
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
        exported: true,
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
        this.assignment(child, scope, exporting);
        argv.push({ ...wordToken([child]), text: child.text });
      } else {
        if (child.type === 'variable_name' && exporting) {
          this.assignments.push({
            name: child.text,
            range: this.range(child, scope),
            via: scope.via,
            exported: true,
          });
        }
        this.walk(child, scope);
        argv.push(wordToken([child]));
      }
    }
    this.emit(argv, this.range(node, scope), scope);
  }

  /** `exported`: the value reaches a command's environment (`NAME=v cmd`, `export NAME=v`). */
  private assignment(node: Node, scope: Scope, exported = false): void {
    const target = node.childForFieldName('name') ?? node.firstNamedChild;
    const name =
      target?.type === 'subscript' ? (target.childForFieldName('name')?.text ?? target.text) : target?.text;
    if (name) {
      this.assignments.push({
        name,
        range: this.range(node, scope),
        via: scope.via,
        ...(exported ? { exported: true } : {}),
      });
    }
    for (const child of node.namedChildren) if (child) this.walk(child, scope);
  }

  /**
   * A here-document. With a quoted delimiter (`<<'EOF'`, `<<"EOF"`, `<<E\OF`)
   * the body is literal. Otherwise bash expands it, and the body is walked
   * (after the check for substitutions the parser missed).
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
      this.findings([unmodeledHeredocSubstitutions(child)], scope);
      this.children(child, { ...scope, via: [...scope.via, 'heredoc'] });
    }
  }

  /** Records what a check found (nulls are checks that found nothing). */
  private findings(found: readonly (Finding | null)[], scope: Scope): void {
    for (const f of found) if (f) this.problem(scope, f.kind, f.message, this.range(f.at, scope));
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

/** The `runTimeInput` of a command emitted in `scope` (run by `xargs`). */
function runTimeInput(scope: Scope, argv: readonly Token[]): Pick<SimpleCommand, 'runTimeInput'> {
  const placeholder = scope.xargsReplace;
  if (placeholder !== undefined && argv.some((t) => t.text.includes(placeholder))) {
    return { runTimeInput: { placeholder } };
  }
  return scope.appendsInput ? { runTimeInput: {} } : {};
}

function withRedirects(scope: Scope, writes: readonly Redirection[]): Scope {
  return { ...scope, redirects: [...(scope.redirects ?? []), ...writes] };
}

function withoutRedirects(scope: Scope): Scope {
  if (!scope.redirects) return scope;
  const { redirects: _, ...rest } = scope;
  return rest;
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
