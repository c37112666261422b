import { basename, isAbsolute, posix } from 'node:path';
import type { SimpleCommand } from '../decision.js';
import { globToRegExp } from '../policy-file/name-glob.js';
import { expandPolicyPath, isInside, realpathOrNull } from '../policy-file/policy-paths.js';
import type { PolicyRule } from '../policy-file/policy-types.js';
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

  /** `serverCwd`: what `${SERVER_CWD}` in a `path:` pattern stands for (by default the process cwd). */
  constructor(
    readonly rule: PolicyRule,
    serverCwd?: string,
  ) {
    this.globs = rule.glob?.map(globToRegExp);
    this.regexes = rule.regex?.map((r) => new RegExp(`^(?:${r})$`, 'u'));
    const forms = rule.path?.flatMap((written) => pathForms(written, serverCwd));
    this.paths = forms && { test: compilePathGlobs(forms), segments: forms.map(segments) };
  }

  /** True when every matcher of the rule accepts `command` run in `cwd` (the resolved cwd, or null). */
  matches(command: SimpleCommand, cwd: string | null, facts: CommandFacts): boolean {
    const { rule } = this;
    const args = command.argv.slice(1);
    const byName = rule.program?.filter((p) => programMatches(p, command.program));
    if (byName?.length === 0) return false;
    if (rule.argvPrefix && !rule.argvPrefix.some((prefix) => prefix.every((token, i) => args[i] === token))) {
      return false;
    }
    if (rule.argvContains && !args.some((a) => rule.argvContains!.includes(a))) return false;
    if (this.globs || this.regexes) {
      const text = normalisedCommand(command);
      if (this.globs && !this.globs.some((g) => g.test(text))) return false;
      if (this.regexes && !this.regexes.some((r) => r.test(text))) return false;
    }
    if (rule.cwd && (cwd === null || !rule.cwd.some((d) => isInside(cwd, d)))) return false;
    if (this.paths && !facts.touched().some((t) => this.touches(t))) return false;
    // A name alone does not prove identity: an allow rule matched by a basename needs the file it runs.
    // (An absolute path in the rule is the policy naming the file itself.)
    const named = byName?.every((p) => !isAbsolute(p)) === true;
    if (rule.decision === 'allow' && named && !facts.identity().trusted) {
      return false;
    }
    return true;
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
