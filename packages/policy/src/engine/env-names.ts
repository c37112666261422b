import { globToRegExp } from '../policy-file/name-glob.js';

/**
 * Variable names some program reads whatever their case: npm (and pnpm,
 * yarn 1) read `npm_config_*` case-insensitively, so `Npm_config_script_shell`
 * sets `script-shell` as `npm_config_script_shell` would. A name matching
 * one of these is checked against env.deny with case folded.
 */
export const CASE_INSENSITIVE_NAMES: readonly RegExp[] = [/^npm_config_/i];

/**
 * Why setting a name is dangerous, for names that point a program at
 * configuration (which can name a command to run). Shown with the denial.
 */
const INDIRECTIONS: readonly (readonly [RegExp, string])[] = [
  [
    /^HOME$/,
    'programs load configuration from the home directory (a planted .gitconfig can set core.fsmonitor or core.pager to a command)',
  ],
  [
    /^XDG_CONFIG_HOME$/,
    'programs load configuration from it (git, pip, gh, … read files that can name a command)',
  ],
  [/^RIPGREP_CONFIG_PATH$/, 'rg reads options from that file, and --pre runs a program'],
  [/_CONFIG/i, 'it points a program at a configuration file or setting, which can name a command to run'],
];

/** The reason a name is an indirection, or null. */
export function indirectionReason(name: string): string | null {
  return INDIRECTIONS.find(([pattern]) => pattern.test(name))?.[1] ?? null;
}

/** Deny globs compiled for a name check: as written, and case-folded for `CASE_INSENSITIVE_NAMES`. */
export class EnvNameMatcher {
  private readonly exact: readonly RegExp[];
  private readonly folded: readonly RegExp[];

  constructor(globs: readonly string[]) {
    this.exact = globs.map(globToRegExp);
    this.folded = this.exact.map((r) => new RegExp(r.source, 'i'));
  }

  matches(name: string): boolean {
    if (this.exact.some((r) => r.test(name))) return true;
    return CASE_INSENSITIVE_NAMES.some((c) => c.test(name)) && this.folded.some((r) => r.test(name));
  }
}
