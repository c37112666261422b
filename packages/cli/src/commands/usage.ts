import type { CliIo } from './cli-io.js';

/**
 * A bad command line. Every command reports it the same way
 * (`reportUsageError`): one line `termgate <command>: <message>` and a
 * pointer to `--help`, on stderr, exit status 2.
 */
export class UsageError extends Error {}

/** The exit status of a usage error. */
export const EXIT_USAGE = 2;

/**
 * Whether `-h` or `--help` is among `argv`'s options: tokens before `--`,
 * and before `end` when given (the index where the operands start, e.g.
 * acp-proxy's agent command, whose own flags are not ours).
 */
export function wantsHelp(argv: readonly string[], end = argv.length): boolean {
  for (const token of argv.slice(0, end)) {
    if (token === '--') return false;
    if (token === '-h' || token === '--help') return true;
  }
  return false;
}

/** Prints `usage` on stdout: asked-for help is the command's output. Returns 0. */
export function printUsage(io: CliIo, usage: string): number {
  io.stdout.write(usage);
  return 0;
}

/** Writes the one usage-error message style on stderr and returns 2. `command` is e.g. `serve` or `policy explain`. */
export function reportUsageError(io: CliIo, command: string, message: string): number {
  const name = command === '' ? 'termgate' : `termgate ${command}`;
  io.stderr.write(`${name}: ${message}\nRun "${name} --help" for usage.\n`);
  return EXIT_USAGE;
}

/**
 * A `node:util` parseArgs error as a usage error in our words: `unknown
 * option --x`, `--x needs a value` (also when the next word is an option);
 * other messages pass unchanged.
 */
export function usageErrorFrom(error: unknown): UsageError {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: string }).code;
  const option = /'(-{1,2}[^' ]+)/.exec(message)?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && option !== undefined)
    return new UsageError(`unknown option ${option}`);
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && option !== undefined) {
    if (/argument missing/.test(message)) return new UsageError(`${option} needs a value`);
    // `--policy --audit x`: the word after the option is another option, not its value.
    if (/argument is ambiguous/.test(message))
      return new UsageError(`${option} needs a value (one that starts with - is written ${option}=VALUE)`);
  }
  return new UsageError(message);
}
