import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Words that are bash builtins or keywords: they cannot be shimmed (bash never looks them up). */
export const BUILTINS: ReadonlySet<string> = new Set(
  (
    'echo printf cd test true false pwd eval source exec command builtin export declare local readonly ' +
    'typeset unset read let set shift trap alias unalias hash type wait coproc if then else elif fi ' +
    'for while until do done case esac in function select break continue return exit enable shopt compgen'
  ).split(' '),
);

/**
 * Tools whose shim logs and then runs the real program (which, with PATH =
 * the shims, can only reach other shims). Everything else only logs.
 */
export const REAL_TOOLS: Readonly<Record<string, string>> = {
  bash: '/bin/bash',
  rbash: '/bin/rbash',
  sh: '/bin/sh',
  env: '/usr/bin/env',
  timeout: '/usr/bin/timeout',
  nice: '/usr/bin/nice',
  nohup: '/usr/bin/nohup',
  stdbuf: '/usr/bin/stdbuf',
  xargs: '/usr/bin/xargs',
  find: '/usr/bin/find',
};

/**
 * Launchers whose shim logs and then runs its arguments itself, as the real
 * tool would, so the tests need no package beyond bash, coreutils and
 * findutils (`/usr/bin/time` is in Debian's optional `time` package).
 */
export const ARGUMENT_RUNNERS: ReadonlySet<string> = new Set(['time']);

/** One program execution a shim saw. */
export interface Execution {
  readonly name: string;
  readonly cwd: string;
  readonly args: readonly string[];
}

/**
 * Writes a logging shim for every name into `dir`. Each shim has its own
 * name written into it, so a copy or symlink of the `sudo` shim still logs
 * `sudo`: the log says which program ran, whatever it was called. The log
 * file is written into the shim too, so `env -i` does not lose it. One
 * write per execution (name, cwd, arguments, tab-separated), so pipeline
 * members do not interleave.
 */
export function writeShims(
  dir: string,
  names: Iterable<string>,
  real: Readonly<Record<string, string>>,
  logFile: string,
): void {
  mkdirSync(dir, { recursive: true });
  for (const name of names) {
    const tool = real[name];
    const log = `entry=${shellQuote(name)}$'\\t'"$PWD"; for a in "$@"; do entry+=$'\\t'"$a"; done; printf '%s\\n' "$entry" >> ${shellQuote(logFile)}`;
    const tail = ARGUMENT_RUNNERS.has(name)
      ? 'exec "$@"'
      : tool && existsSync(tool)
        ? `exec ${tool} "$@"`
        : 'exit 0';
    const script = `#!/bin/bash\n${log}\n${tail}\n`;
    writeFileSync(join(dir, name), script);
    chmodSync(join(dir, name), 0o755);
  }
}

/** Runs `line` as `bash --noprofile --norc -c LINE` with PATH = the shims; returns what they logged. */
export function runUnderShims(
  line: string,
  options: { shims: string; cwd: string; home: string; log: string },
): { executions: Execution[]; stderr: string } {
  writeFileSync(options.log, '');
  const run = spawnSync('/bin/bash', ['--noprofile', '--norc', '-c', line], {
    cwd: options.cwd,
    env: { PATH: options.shims, HOME: options.home },
    input: '',
    timeout: 10_000,
    encoding: 'utf8',
  });
  const executions = readFileSync(options.log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((entry) => {
      const [name, cwd, ...args] = entry.split('\t');
      return { name: name!, cwd: cwd!, args };
    });
  return { executions, stderr: run.stderr };
}

function shellQuote(word: string): string {
  return `'${word.replaceAll("'", "'\\''")}'`;
}
