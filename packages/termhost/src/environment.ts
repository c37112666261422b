/**
 * Variables set for every command so that nothing waits for a human: pagers
 * print instead of paging, git and apt never prompt or open an editor, and
 * `TERM=dumb` plus `NO_COLOR` ask tools for plain output. They override the
 * inherited environment; a request's own `env` overrides them.
 *
 * `CI` is deliberately not set: it changes what tools do (jest refuses to
 * write snapshots, for example), not only whether they prompt.
 */
export const NON_INTERACTIVE_ENV: Readonly<Record<string, string>> = Object.freeze({
  PAGER: 'cat',
  GIT_PAGER: 'cat',
  GH_PAGER: 'cat',
  MANPAGER: 'cat',
  SYSTEMD_PAGER: 'cat',
  AWS_PAGER: 'cat',
  GIT_TERMINAL_PROMPT: '0',
  GIT_EDITOR: 'true',
  EDITOR: 'true',
  VISUAL: 'true',
  TERM: 'dumb',
  NO_COLOR: '1',
  DEBIAN_FRONTEND: 'noninteractive',
});

/**
 * Variables that make bash run code or change its grammar before the command
 * line runs: `BASH_ENV` and `ENV` (startup files), `SHELLOPTS`/`BASHOPTS`
 * (e.g. `xtrace`, which evaluates `PS4`), and exported functions
 * (`BASH_FUNC_<name>%%`, which shadow commands by name). They are removed from
 * the environment of command **lines**, whoever set them, so the shell that
 * runs is the shell the policy judged. Argv specs get them as set.
 */
export const SHELL_STARTUP_ENV: readonly string[] = Object.freeze([
  'BASH_ENV',
  'ENV',
  'SHELLOPTS',
  'BASHOPTS',
]);

/** True for a variable removed from command lines' environment (see {@link SHELL_STARTUP_ENV}). */
export function isShellStartupVariable(name: string): boolean {
  return SHELL_STARTUP_ENV.includes(name) || name.startsWith('BASH_FUNC_');
}

/**
 * `inherited` (undefined values dropped) overlaid with {@link NON_INTERACTIVE_ENV};
 * for command lines also without shell startup variables.
 */
export function baseEnvironment(
  inherited: Readonly<Record<string, string | undefined>>,
  commandLine: boolean,
): Readonly<Record<string, string>> {
  const env: Record<string, string> = {};
  for (const name of Object.keys(inherited)) {
    const value = inherited[name];
    if (value !== undefined && !(commandLine && isShellStartupVariable(name))) env[name] = value;
  }
  return Object.freeze(Object.assign(env, NON_INTERACTIVE_ENV));
}

/**
 * The environment a command runs with: `base` (from {@link baseEnvironment}
 * with the same `commandLine`), then the request's `env`, whose shell startup
 * variables are ignored for command lines.
 */
export function commandEnvironment(
  base: Readonly<Record<string, string>>,
  requested: Readonly<Record<string, string>>,
  commandLine: boolean,
): Record<string, string> {
  const env: Record<string, string> = { ...base };
  for (const name of Object.keys(requested)) {
    if (!(commandLine && isShellStartupVariable(name))) env[name] = requested[name]!;
  }
  return env;
}
