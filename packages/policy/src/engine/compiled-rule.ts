import { basename, isAbsolute, posix } from 'node:path';
import type { SimpleCommand } from '../decision.js';
import { globToRegExp } from '../policy-file/name-glob.js';
import { isInside } from '../policy-file/policy-paths.js';
import type { PolicyRule } from '../policy-file/policy-types.js';

/**
 * The normalised form of a simple command that `glob` and `regex` see: the
 * program's basename, then the unquoted arguments, joined by single spaces.
 * (`"/usr/bin/git" push  '--force'` → `git push --force`.)
 */
export function normalisedCommand(command: SimpleCommand): string {
  return [basename(command.program), ...command.argv.slice(1)].join(' ');
}

/** A rule ready to match: matchers AND-ed, alternatives within a matcher OR-ed. */
export class CompiledRule {
  private readonly globs: readonly RegExp[] | undefined;
  private readonly regexes: readonly RegExp[] | undefined;

  constructor(readonly rule: PolicyRule) {
    this.globs = rule.glob?.map(globToRegExp);
    this.regexes = rule.regex?.map((r) => new RegExp(`^(?:${r})$`, 'u'));
  }

  /** True when every matcher of the rule accepts `command` run in `cwd` (the resolved cwd, or null). */
  matches(command: SimpleCommand, cwd: string | null): boolean {
    const { rule } = this;
    const args = command.argv.slice(1);
    if (rule.program && !rule.program.some((p) => programMatches(p, command.program))) return false;
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
    return true;
  }
}

/**
 * A basename pattern matches any argv[0] with that basename (`rm`, `/bin/rm`,
 * `./rm`). An absolute pattern pins the path: it matches only an argv[0]
 * written as that absolute path (after `.`/`..` normalisation); a bare name
 * never matches it, because PATH lookup happens at run time.
 */
function programMatches(pattern: string, program: string): boolean {
  if (isAbsolute(pattern))
    return isAbsolute(program) && posix.normalize(program) === posix.normalize(pattern);
  return basename(program) === pattern;
}
