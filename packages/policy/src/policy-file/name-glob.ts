/**
 * Compiles a whole-string glob: `*` matches any run of characters (spaces and
 * slashes included), `?` one character, `[…]` a class; everything else is
 * literal. Used for env names and for rule `glob` over a normalised command.
 */
export function globToRegExp(glob: string): RegExp {
  let source = '';
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i]!;
    if (ch === '*') source += '[\\s\\S]*';
    else if (ch === '?') source += '[\\s\\S]';
    else if (ch === '[') {
      const end = glob.indexOf(']', i + 2);
      if (end === -1) source += '\\[';
      else {
        const body = glob.slice(i + 1, end).replace(/\\/g, '\\\\');
        source += `[${body.startsWith('!') ? `^${body.slice(1)}` : body}]`;
        i = end;
      }
    } else source += ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

/** True when `name` matches any of the globs. */
export function matchesAny(name: string, globs: readonly RegExp[]): boolean {
  return globs.some((g) => g.test(name));
}

/**
 * Names nobody may set, whatever the policy says: they change what bash or
 * the dynamic loader runs before the judged line (the judged line must be
 * the executed line).
 */
export const ENV_DENY_FLOOR: readonly string[] = [
  'LD_*',
  'DYLD_*',
  'BASH_ENV',
  'ENV',
  'BASH_FUNC_*',
  'SHELLOPTS',
  'BASHOPTS',
  'PS4',
  'PROMPT_COMMAND',
];
