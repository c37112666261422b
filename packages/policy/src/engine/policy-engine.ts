import { basename, isAbsolute, resolve } from 'node:path';
import type { CommandRequest, PolicyDecision, Redirection, SimpleCommand, Verdict } from '../decision.js';
import { PolicyError, type PolicyIssue } from '../policy-file/policy-error.js';
import { EXAMPLE_WORKSPACE, homeDirectory, realpathOrNull } from '../policy-file/policy-paths.js';
import type { LoadedPolicy, PolicyRule } from '../policy-file/policy-types.js';
import type { CommandJudge } from '../ports/command-judge.js';
import { type LineAnalysis, literalToken } from '../shell/analysis.js';
import { loadBashParser } from '../shell/bash-grammar.js';
import { ShellAnalyzer } from '../shell/shell-analyzer.js';
import { type CommandFacts, CompiledRule } from './compiled-rule.js';
import { createdInLine, linkedInLine } from './made-in-line.js';
import { runPolicyTests } from './policy-tests.js';
import { identifyProgram, type LineFacts, type ProgramIdentity } from './program-identity.js';
import { RequestChecks } from './request-checks.js';
import { SandboxView } from './sandbox-view.js';
import { type TouchedPath, touchedPaths } from './touched-paths.js';
import { writableRoots } from './writable-roots.js';
import { WriteChecks, type WriteVerdict } from './write-checks.js';

/** How one simple command was decided. */
export interface CommandVerdict {
  readonly command: SimpleCommand;
  readonly decision: Verdict;
  /** The deciding rules (deny rules when any matched, else ask rules, else allow rules); empty when `default` decided. */
  readonly rules: readonly PolicyRule[];
}

/** A decision with the detail `policy explain` shows. */
export interface Explanation {
  readonly decision: PolicyDecision;
  readonly analysis: LineAnalysis;
  readonly verdicts: readonly CommandVerdict[];
  /** One per output redirection with a literal target, in source order. */
  readonly writes: readonly WriteVerdict[];
  /** Line-level reasons to deny: cwd, env, constructs that cannot be judged. */
  readonly refusals: readonly string[];
}

/** Judges requests against one loaded policy. Implements the gate's `CommandJudge` port. */
export class PolicyEngine implements CommandJudge {
  private readonly rules: readonly CompiledRule[];
  private readonly checks: RequestChecks;
  private readonly writeChecks: WriteChecks;
  private readonly writable: readonly string[];
  private readonly inheritsPath: boolean;
  /** The filesystem as the sandboxed command sees it (its private /tmp is empty). */
  private readonly view: SandboxView;

  constructor(
    readonly policy: LoadedPolicy,
    private readonly analyzer: ShellAnalyzer,
  ) {
    this.rules = policy.rules.map((r) => new CompiledRule(r));
    this.writable = writableRoots(policy);
    this.inheritsPath = Object.hasOwn(policy.inheritedEnv({ PATH: '/' }), 'PATH');
    this.checks = new RequestChecks(policy);
    this.view = SandboxView.of(policy);
    this.writeChecks = new WriteChecks(policy.writes, this.view);
  }

  /**
   * Synchronous and total: never throws. A line is allowed only when the cwd
   * and env pass, nothing in it is beyond static judgement (or the policy
   * allows dynamic constructs), and every simple command in it is allowed.
   * Per command, any matching deny rule wins over matching ask rules, which
   * win over matching allow rules; with no match, `default` decides. A line
   * nothing denies but something asks for (a command, or a write that
   * `writes.default: ask` decided) is `ask`: it runs only once a person
   * approved it, with the same cwd, writes and sandbox as an allow.
   */
  judge(request: CommandRequest): PolicyDecision {
    return this.explain(request).decision;
  }

  /** `judge`, with the parsed line and the per-command verdicts. */
  explain(request: CommandRequest): Explanation {
    try {
      return this.decide(request);
    } catch (error) {
      const decision: PolicyDecision = {
        decision: 'deny',
        ruleIds: [],
        reason: `denied: internal error while judging (${(error as Error).message})`,
        subcommands: [],
        resolvedCwd: null,
      };
      return {
        decision,
        analysis: { commands: [], words: [], problems: [], assignments: [], redirects: [] },
        verdicts: [],
        writes: [],
        refusals: [],
      };
    }
  }

  private decide(request: CommandRequest): Explanation {
    const resolvedCwd = realpathOrNull(request.cwd);
    const analysis =
      request.args === null
        ? this.analyzer.analyzeLine(request.command)
        : this.analyzer.analyzeArgv([request.command, ...request.args]);
    const refusals: string[] = [];
    const cwdProblem = this.checks.cwdProblem(request, resolvedCwd);
    if (cwdProblem) refusals.push(cwdProblem);
    refusals.push(...this.checks.envProblems(request));
    for (const p of analysis.problems) {
      if (p.kind === 'dynamic' && this.policy.allowDynamic) continue;
      refusals.push(`cannot judge ${p.message}${p.via.length ? ` (in ${p.via.join(' > ')})` : ''}`);
    }
    refusals.push(...this.checks.assignmentProblems(analysis.assignments));

    // Dynamic targets are problems above; with allowDynamic they go unchecked, like `$cmd`.
    // A relative target after `cd`/`pushd` may land in any directory the line can be in by
    // then: it is judged against every one of them (any deny denies). When those directories
    // cannot be known (`cd $X`, `cd -`, `find -execdir`, `env -C`, CDPATH set), it is refused.
    const base = resolvedCwd ?? request.cwd;
    const movesCwd = analysis.commands.find(changesDirectory);
    const dirs = movesCwd === undefined ? [base] : possibleDirectories(analysis, base);
    const line: LineFacts = {
      commands: analysis.commands,
      words: analysis.words,
      redirects: analysis.redirects,
      dirs,
      path: request.env.PATH ?? (this.inheritsPath ? process.env.PATH : undefined),
      shell: request.args === null,
      writable: this.writable,
    };
    if (!this.policy.allowDynamic) refusals.push(...createdInLine(line), ...linkedInLine(line));
    const verdicts = analysis.commands.map((command, i) =>
      this.verdict(command, resolvedCwd, commandFacts(line, i, this.view)),
    );
    const denied = verdicts.filter((v) => v.decision === 'deny');
    const relative = (r: Redirection): boolean => r.literal && !r.tilde && !isAbsolute(r.target);
    for (const r of analysis.redirects.filter((r) => dirs === null && relative(r))) {
      if (this.policy.allowDynamic) continue;
      const shown = excerpt(movesCwd!.argv.join(' '));
      refusals.push(
        `cannot judge the relative redirection target \`${excerpt(r.target)}\`: the line changes directory (\`${shown}\`) to a place not known in advance`,
      );
    }
    const writes = analysis.redirects
      .filter((r) => r.literal && !(dirs === null && relative(r)))
      .map((r) => {
        if (!relative(r) || dirs === null || dirs.length === 1)
          return this.writeChecks.judge(r, dirs?.[0] ?? base);
        const judged = dirs.map((dir) => this.writeChecks.judge(r, dir));
        return judged.find((w) => w.decision === 'deny') ?? judged[judged.length - 1]!;
      });
    const deniedWrites = writes.filter((w) => w.decision === 'deny');
    const common = { subcommands: withPaths(analysis.commands, writes), resolvedCwd };
    let decision: PolicyDecision;
    if (refusals.length > 0 || denied.length > 0 || deniedWrites.length > 0) {
      const parts = [...refusals, ...denied.map(describe), ...deniedWrites.map(describeWrite)];
      decision = {
        ...common,
        decision: 'deny',
        ruleIds: [...ruleIds(denied), ...writeIds(deniedWrites)],
        reason: `denied: ${parts.join('; ')}`,
      };
    } else if (verdicts.length === 0) {
      decision = {
        ...common,
        decision: this.policy.default,
        ruleIds: [],
        reason: `${VERDICT_WORD[this.policy.default]}: no command to run; the default (${this.policy.default}) decided`,
      };
    } else if (verdicts.some((v) => v.decision === 'ask') || writes.some((w) => w.decision === 'ask')) {
      const asking = verdicts.filter((v) => v.decision === 'ask');
      const askedWrites = writes.filter((w) => w.decision === 'ask');
      decision = {
        ...common,
        decision: 'ask',
        ruleIds: [...ruleIds(asking), ...writeIds(askedWrites)],
        reason: `approval needed: ${[...asking.map(describe), ...askedWrites.map(describeWrite)].join('; ')}`,
      };
    } else {
      decision = {
        ...common,
        decision: 'allow',
        ruleIds: [...ruleIds(verdicts), ...writeIds(writes)],
        reason: `allowed: ${verdicts.map(describe).join('; ')}`,
      };
    }
    return { decision, analysis, verdicts, writes, refusals };
  }

  /**
   * Checks every rule's `match:`/`notMatch:` examples (as Codex's
   * execpolicy does): a `match` line must have a simple command the rule
   * matches, a `notMatch` line none. Judged in a synthetic workspace,
   * `EXAMPLE_WORKSPACE`, which `${SERVER_CWD}` stands for in the rules
   * compiled for them, on the words alone: program identity is not checked,
   * so examples depend neither on where the server starts nor on what this
   * machine has installed.
   */
  exampleFailures(): PolicyIssue[] {
    const issues: PolicyIssue[] = [];
    this.exampleRules().forEach((compiled, i) => {
      const { rule } = compiled;
      const check = (line: string, want: boolean, key: 'match' | 'notMatch'): void => {
        if (this.matchesExample(compiled, line) !== want) {
          issues.push({
            file: this.policy.path,
            ...rule.position,
            key: `rules[${i}].${key}`,
            message: `rule "${rule.id}" ${want ? 'does not match' : 'matches'} its ${key} example ${JSON.stringify(line)}`,
          });
        }
      };
      for (const line of rule.match ?? []) check(line, true, 'match');
      for (const line of rule.notMatch ?? []) check(line, false, 'notMatch');
    });
    return issues;
  }

  /** The rules that match an example line, as `exampleFailures` matches (synthetic workspace, words alone). */
  rulesMatchingExample(line: string): PolicyRule[] {
    return this.exampleRules()
      .filter((compiled) => this.matchesExample(compiled, line))
      .map((c) => c.rule);
  }

  private exampleRules(): CompiledRule[] {
    return this.policy.rules.map(
      (rule) =>
        new CompiledRule(
          rule.exampleCwd === undefined ? rule : { ...rule, cwd: rule.exampleCwd },
          EXAMPLE_WORKSPACE,
        ),
    );
  }

  private matchesExample(compiled: CompiledRule, line: string): boolean {
    const cwd = EXAMPLE_WORKSPACE;
    const analysis = this.analyzer.analyzeLine(line);
    const dirs = analysis.commands.some(changesDirectory) ? possibleDirectories(analysis, cwd) : [cwd];
    return analysis.commands.some((command, k) =>
      compiled.matches(command, cwd, {
        touched: () => touchedPaths(analysis.words[k] ?? [], dirs, this.view),
        identity: () => ({ trusted: true }),
      }),
    );
  }

  private verdict(command: SimpleCommand, cwd: string | null, facts: CommandFacts): CommandVerdict {
    const matched = this.rules.filter((r) => r.matches(command, cwd, facts)).map((r) => r.rule);
    const denies = matched.filter((r) => r.decision === 'deny');
    if (denies.length > 0) return { command, decision: 'deny', rules: denies };
    const asks = matched.filter((r) => r.decision === 'ask');
    if (asks.length > 0) return { command, decision: 'ask', rules: asks };
    const allows = matched.filter((r) => r.decision === 'allow');
    if (allows.length > 0) return { command, decision: 'allow', rules: allows };
    return { command, decision: this.policy.default, rules: [] };
  }
}

export interface PolicyEngineOptions {
  /**
   * Refuse a policy whose embedded tests fail (`PolicyError`
   * `POLICY_TESTS_FAILED`, one issue per failing test), as Codex does with
   * its examples. Default false: `policy test` reports them instead.
   */
  readonly requirePassingTests?: boolean;
  /**
   * Refuse a policy whose rule `examples` fail (`POLICY_INVALID`). Default
   * true; false only for a policy text whose examples already passed with
   * this engine (the start-up cache of `serve`, keyed by the text's sha256).
   */
  readonly checkExamples?: boolean;
}

/** Loads the bash parser (once per process) and returns an engine for `policy`. */
export async function createPolicyEngine(
  policy: LoadedPolicy,
  options: PolicyEngineOptions = {},
): Promise<PolicyEngine> {
  const engine = new PolicyEngine(policy, new ShellAnalyzer(await loadBashParser()));
  const examples = options.checkExamples === false ? [] : engine.exampleFailures();
  if (examples.length > 0) {
    throw new PolicyError(
      'POLICY_INVALID',
      `${examples.length} rule example(s) of ${policy.path} failed`,
      examples,
    );
  }
  if (options.requirePassingTests) {
    const failures = runPolicyTests(engine, policy).results.filter((r) => !r.passed);
    if (failures.length > 0) {
      throw new PolicyError(
        'POLICY_TESTS_FAILED',
        `${failures.length} embedded test(s) of ${policy.path} failed`,
        failures.map((f) => ({
          file: policy.path,
          ...f.test.position,
          key: 'tests',
          message: `${JSON.stringify(f.test.command)}: ${f.failure}`,
        })),
      );
    }
  }
  return engine;
}

/** Path and identity facts of one command, each computed once and only when a rule asks. */
function commandFacts(line: LineFacts, index: number, view: SandboxView): CommandFacts {
  let touched: readonly TouchedPath[] | undefined;
  let identity: ProgramIdentity | undefined;
  return {
    touched: () => {
      touched ??= touchedPaths(line.words[index] ?? [], line.dirs, view);
      return touched;
    },
    identity: () => {
      identity ??= identifyProgram(line, index);
      return identity;
    },
  };
}

/** At most this many directories are tracked for one line; past it, relative writes are refused. */
const MAX_TRACKED_DIRECTORIES = 16;

/**
 * Every directory a line may be in when it writes: the request cwd and each
 * literal `cd`/`pushd` target, resolved (lexically) against every directory
 * reached before it, in source order. An over-approximation that is sound
 * for any control flow: a write is judged against all of them. `null` when
 * a target cannot be known in advance: no operand (`$HOME`), `-`, `~…`, an
 * expansion or a glob, CDPATH assigned in the line, `find -execdir`,
 * `env -C`, or too many directories.
 */
function possibleDirectories(analysis: LineAnalysis, cwd: string): string[] | null {
  if (analysis.assignments.some((a) => a.name === 'CDPATH')) return null;
  const homeKnown = !analysis.assignments.some((a) => a.name === 'HOME');
  const dirs = new Set([cwd]);
  for (const [index, command] of analysis.commands.entries()) {
    if (!changesDirectory(command)) continue;
    const name = basename(command.program);
    if (name === 'popd') continue; // back to a directory already tracked
    if (name !== 'cd' && name !== 'pushd') return null;
    const words = analysis.words[index] ?? command.argv.map((a) => literalToken(a));
    const operands = cdOperands(words.slice(1));
    // `cd` alone goes home.
    if (operands.length === 0 && name === 'cd' && homeKnown) {
      dirs.add(homeDirectory());
      continue;
    }
    if (operands.length !== 1) return null;
    const operand = operands[0]!;
    let target = operand.text;
    if (operand.tilde && homeKnown && /^~(\/|$)/.test(target)) target = homeDirectory() + target.slice(1);
    // Expansions and globs (or a quoted `$`, conservatively) are not known in advance.
    if (target === '' || target === '-' || /^\+|[$`*?[]/.test(target)) return null;
    if (operand.tilde && target.startsWith('~')) return null; // `~user`, or HOME set in the line
    for (const dir of [...dirs]) dirs.add(resolve(dir, target));
    if (dirs.size > MAX_TRACKED_DIRECTORIES) return null;
  }
  return [...dirs];
}

/**
 * The operands of `cd`/`pushd` as bash's getopt reads them: the options
 * `-L`, `-P`, `-e`, `-@` (alone or together) only before the first operand,
 * and a first `--` ends them; every word after that is an operand, even one
 * spelled like an option (`cd -- -L` enters `./-L`).
 */
function cdOperands<W extends { readonly text: string }>(words: readonly W[]): W[] {
  let i = 0;
  while (i < words.length && /^-[LPe@]+$/.test(words[i]!.text)) i++;
  if (words[i]?.text === '--') i++;
  return words.slice(i);
}

/** Programs that run commands in a directory other than the line's cwd (`cd`, `pushd`, `popd`, `find -execdir`, `env -C`). */
function changesDirectory(command: SimpleCommand): boolean {
  const name = basename(command.program);
  const args = command.argv.slice(1);
  if (name === 'cd' || name === 'pushd' || name === 'popd') return true;
  if (name === 'find') return args.some((a) => a === '-execdir' || a === '-okdir');
  if (name === 'env') return args.some((a) => /^(-[a-zA-Z]*C|--ch)/.test(a));
  return false;
}

function ruleIds(verdicts: readonly CommandVerdict[]): string[] {
  return [...new Set(verdicts.flatMap((v) => v.rules.map((r) => r.id)))];
}

/** Pseudo rule ids of the deciding write patterns: `writes.deny[i]`, `writes.allow[i]`, `writes.default` (deny only). */
function writeIds(writes: readonly WriteVerdict[]): string[] {
  const ids = writes.flatMap((w) =>
    w.pattern ? [w.pattern.id] : w.decision !== 'allow' ? ['writes.default'] : [],
  );
  return [...new Set(ids)];
}

function describeWrite(w: WriteVerdict): string {
  const r = w.redirect;
  const shown = `\`${r.descriptor ?? ''}${r.operator} ${excerpt(r.target)}\` writes ${w.path}`;
  return w.pattern
    ? `${shown}, which ${w.pattern.id} (${w.pattern.pattern}) forbids`
    : `${shown}, which no writes.allow pattern matches and writes.default is ${w.decision}`;
}

/** The commands with the judged path filled into each of their redirections. */
function withPaths(commands: readonly SimpleCommand[], writes: readonly WriteVerdict[]): SimpleCommand[] {
  const paths = new Map<Redirection, string>(writes.map((w) => [w.redirect, w.path]));
  return commands.map((c) =>
    c.redirects
      ? {
          ...c,
          redirects: c.redirects.map((r) => {
            const path = paths.get(r);
            return path === undefined ? r : { ...r, path };
          }),
        }
      : c,
  );
}

function describe(v: CommandVerdict): string {
  const shown = excerpt(v.command.argv.join(' '));
  if (v.rules.length === 0) return `\`${shown}\` matched no rule and the default is ${v.decision}`;
  const rules = v.rules.map((r) => (r.reason ? `${r.id} (${r.reason})` : r.id)).join(', ');
  if (v.decision === 'deny') return `\`${shown}\` matched deny rule ${rules}`;
  if (v.decision === 'ask') return `\`${shown}\` matched ask rule ${rules}`;
  return `\`${shown}\` by ${rules}`;
}

const VERDICT_WORD: Readonly<Record<Verdict, string>> = {
  allow: 'allowed',
  deny: 'denied',
  ask: 'approval needed',
};

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > 80 ? `${flat.slice(0, 77)}...` : flat;
}
