import { basename, isAbsolute, posix } from 'node:path';
import type { SimpleCommand } from '../decision.js';
import { globToRegExp } from '../policy-file/name-glob.js';
import { expandPolicyPath, isInside, realpathOrNull } from '../policy-file/policy-paths.js';
import type { PolicyRule } from '../policy-file/policy-types.js';
import { canonicalArgv } from '../shell/canonical-argv.js';
import { compilePathGlobs, globsMayMeet, segments } from './path-glob.js';
import type { ProgramIdentity } from './program-identity.js';
import type { TouchedPath } from './touched-paths.js';

/**
 * The normalised form of a simple command that `glob` and `regex` see: the
 * program's basename, then the unquoted arguments, joined by single spaces.
 * (`"/usr/bin/git" push  '--force'` → `git push --force`.)
 */
export function normalisedCommand(command: SimpleCommand): string {
  return [basename(command.program), ...command.argv.slice(1)].join(' ');
}

/** What a rule may ask about one command beyond its words, computed on first use. */
export interface CommandFacts {
  /** The paths its arguments name (see `touchedPaths`). */
  touched(): readonly TouchedPath[];
  /** Which file its program is, and whether that is trusted by name. */
  identity(): ProgramIdentity;
}

/** A rule ready to match: matchers AND-ed, alternatives within a matcher OR-ed. */
export class CompiledRule {
  private readonly globs: readonly RegExp[] | undefined;
  private readonly regexes: readonly RegExp[] | undefined;
  /** Every `path:` pattern (as written and realpath'd) in one regex, and each one's segments. */
  private readonly paths:
    | { readonly test: RegExp; readonly segments: readonly (readonly string[])[] }
    | undefined;
  /** Program names the rule's regexes and globs start with (`(terraform|tofu)( …` → terraform, tofu). */
  private readonly leadingNames: readonly string[];
  private readonly sources: readonly string[];
  /** Per program name: words of the rule's text, tried as the words xargs may supply. */
  private readonly probesFor = new Map<string, readonly string[]>();

  /** `serverCwd`: what `${SERVER_CWD}` in a `path:` pattern stands for (by default the process cwd). */
  constructor(
    readonly rule: PolicyRule,
    serverCwd?: string,
  ) {
    this.globs = rule.glob?.map(globToRegExp);
    this.regexes = rule.regex?.map((r) => new RegExp(`^(?:${r})$`, 'u'));
    const forms = rule.path?.flatMap((written) => pathForms(written, serverCwd));
    this.paths = forms && { test: compilePathGlobs(forms), segments: forms.map(segments) };
    const sources = [...(rule.regex ?? []), ...(rule.glob ?? [])];
    this.leadingNames = sources.flatMap(leadingProgramNames);
    this.sources = sources;
  }

  /**
   * True when every matcher of the rule accepts `command` run in `cwd` (the
   * resolved cwd, or null). A deny or ask rule's word matchers (`argvPrefix`,
   * `argvContains`, `glob`, `regex`) also accept the command's canonical
   * form (`canonicalArgv`: global options removed); when words known only
   * at run time join its argv (`xargs`), a deny or ask rule that names its
   * program matches when some words from the rule's own text would make it
   * match, and its `path:` patterns count as met. An allow rule sees only
   * the words as written.
   */
  matches(command: SimpleCommand, cwd: string | null, facts: CommandFacts): boolean {
    const { rule } = this;
    const byName = rule.program?.filter((p) => programMatches(p, command.program));
    if (byName?.length === 0) return false;
    const guarded = rule.decision !== 'allow';
    const unknownWords = guarded && command.runTimeInput !== undefined && this.namesProgram(command.program);
    if (!this.wordsMatch(command.argv, guarded) && !(unknownWords && this.someInputMatches(command))) {
      return false;
    }
    if (rule.cwd && (cwd === null || !rule.cwd.some((d) => isInside(cwd, d)))) return false;
    if (this.paths && !unknownWords && !facts.touched().some((t) => this.touches(t))) return false;
    // A name alone does not prove identity: an allow rule matched by a basename needs the file it runs.
    // (An absolute path in the rule is the policy naming the file itself.)
    const named = byName?.every((p) => !isAbsolute(p)) === true;
    if (rule.decision === 'allow' && named && !facts.identity().trusted) {
      return false;
    }
    return true;
  }

  /** The word matchers on `argv` as written, and (for deny and ask rules) on its canonical form. */
  private wordsMatch(argv: readonly string[], canonical: boolean): boolean {
    if (this.wordMatchersAccept(argv)) return true;
    const form = canonical ? canonicalArgv(argv) : null;
    return form !== null && this.wordMatchersAccept(form);
  }

  private wordMatchersAccept(argv: readonly string[]): boolean {
    const { rule } = this;
    const args = argv.slice(1);
    if (rule.argvPrefix && !rule.argvPrefix.some((prefix) => prefix.every((token, i) => args[i] === token))) {
      return false;
    }
    if (rule.argvContains && !args.some((a) => rule.argvContains!.includes(a))) return false;
    if (this.globs || this.regexes) {
      const text = [basename(argv[0] ?? ''), ...args].join(' ');
      if (this.globs && !this.globs.some((g) => g.test(text))) return false;
      if (this.regexes && !this.regexes.some((r) => r.test(text))) return false;
    }
    return true;
  }

  /** The rule names `program` by `program:` or by the literal name(s) its regexes or globs start with. */
  private namesProgram(program: string): boolean {
    const name = basename(program);
    if (this.rule.program) return true; // checked by the caller
    return this.leadingNames.includes(name);
  }

  /**
   * The rule's argvContains and argvPrefix words, and the literal words of
   * its regexes and globs that are about `name` (those starting with it, or
   * naming no program), the program names themselves left out.
   */
  private probeWords(name: string): readonly string[] {
    let probes = this.probesFor.get(name);
    if (probes === undefined) {
      const sources = this.sources.filter((s) => {
        const names = leadingProgramNames(s);
        return names.length === 0 || names.includes(name);
      });
      const words = sources
        .flatMap(literalWords)
        .filter((w) => !leadingProgramNames(w).includes(name) && w !== name);
      const rule = this.rule;
      probes = [
        ...new Set([...(rule.argvContains ?? []), ...(rule.argvPrefix ?? []).flat(), ...words]),
      ].slice(0, MAX_PROBES);
      this.probesFor.set(name, probes);
    }
    return probes;
  }

  /**
   * Whether the words xargs supplies could make the word matchers accept:
   * up to three words taken from the rule's own text, appended (or put in
   * place of the `-I` placeholder's words). Not a proof over every input,
   * a search among the words the rule is about.
   */
  private someInputMatches(command: SimpleCommand): boolean {
    const placeholder = command.runTimeInput?.placeholder;
    const base = command.argv;
    const at = placeholder === undefined ? -1 : base.findIndex((w, i) => i > 0 && w.includes(placeholder));
    const probes = this.probeWords(basename(command.program));
    // Appended after a subcommand already written, the words cannot change the canonical prefix:
    // the two forms are computed once. Otherwise (no subcommand yet, or a placeholder) per candidate.
    const canonical = canonicalArgv(base) ?? base;
    const fixed = at === -1 && canonical.length > 1 && !canonical[1]!.startsWith('-');
    const accepts = (words: readonly string[]): boolean => {
      if (fixed)
        return (
          this.wordMatchersAccept([...base, ...words]) || this.wordMatchersAccept([...canonical, ...words])
        );
      const argv = at === -1 ? [...base, ...words] : [...base.slice(0, at), ...words, ...base.slice(at + 1)];
      return this.wordsMatch(argv, true);
    };
    const search = (chosen: string[], depth: number): boolean => {
      if (accepts(chosen)) return true;
      if (depth === MAX_PROBE_WORDS) return false;
      return probes.some((p) => search([...chosen, p], depth + 1));
    };
    return search([], 0);
  }

  /**
   * A resolved path matches a pattern as written or realpath'd. A path only
   * known as a glob matches a deny rule when the two may meet (fail closed),
   * and never an allow rule.
   */
  private touches(t: TouchedPath): boolean {
    const paths = this.paths!;
    if (t.glob) {
      // deny and ask rules match conservatively: a glob that may meet the pattern matches.
      if (this.rule.decision === 'allow') return false;
      const mine = segments(t.path);
      return paths.segments.some((p) => globsMayMeet(p, mine));
    }
    if (paths.test.test(t.path)) return true;
    const real = t.physical();
    return real !== undefined && paths.test.test(real);
  }
}

/** Most words taken from one rule as candidates for run-time input, and most appended at once. */
const MAX_PROBES = 24;
const MAX_PROBE_WORDS = 3;

/** `(a|b)( …` → [a, b]; `git( …` → [git]; anything else (`(ba|z)?sh…`) names no program. */
function leadingProgramNames(source: string): string[] {
  const m = /^(?:\(([\w.+-]+(?:\|[\w.+-]+)*)\)|([\w.+-]+))(?=[ (]|\\s|$)/.exec(source);
  if (!m) return [];
  return (m[1] ?? m[2]!).split('|');
}

/** The literal words of a regex or glob source: escapes and bracket expressions taken out. */
function literalWords(source: string): string[] {
  const plain = source.replace(/\\./g, ' ').replace(/\[[^\]]*\]/g, ' ');
  return plain.match(/-{0,2}[A-Za-z0-9][A-Za-z0-9_.+:-]*/g) ?? [];
}

/** A `path:` pattern: expanded, normalised, and also with its literal directory prefix realpath'd. */
function pathForms(written: string, serverCwd: string | undefined): string[] {
  const expanded = expandPolicyPath(written, serverCwd);
  const normal = expanded.startsWith('**') ? expanded : posix.normalize(expanded).replace(/(.)\/+$/, '$1');
  const forms = [normal];
  const wild = normal.search(/[*?[{(!]/);
  const literal = wild === -1 ? normal : normal.slice(0, normal.lastIndexOf('/', wild));
  const real = literal === '' ? null : realpathOrNull(literal);
  if (real !== null && real !== literal) forms.push(real + normal.slice(literal.length));
  return forms;
}

/**
 * A basename pattern matches any argv[0] with that basename (`rm`, `/bin/rm`,
 * `./rm`); for an allow rule the program must also be identified (see
 * `identifyProgram`). An absolute pattern pins the path: it matches only an
 * argv[0] written as that absolute path (after `.`/`..` normalisation); a
 * bare name never matches it, because PATH lookup happens at run time.
 */
function programMatches(pattern: string, program: string): boolean {
  if (isAbsolute(pattern))
    return isAbsolute(program) && posix.normalize(program) === posix.normalize(pattern);
  return basename(program) === pattern;
}
