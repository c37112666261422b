import { resolve as resolvePath } from 'node:path';
import { TermhostError } from './errors.js';
import type { ResolvedTerminalSpec, TerminalSpec } from './terminal-spec.js';

/**
 * Request size limits, checked before the gate (so before any audit record):
 * one argument (the command, a command line, each arg) at most the kernel's
 * `MAX_ARG_STRLEN` minus its NUL; a cwd at most `PATH_MAX` minus its NUL;
 * command, args and env together at most 1 MiB. Larger requests could not
 * be exec'd anyway.
 */
export const MAX_ARGUMENT_BYTES = 128 * 1024 - 1;
export const MAX_CWD_BYTES = 4095;
export const MAX_REQUEST_BYTES = 1024 * 1024;

/** A POSIX (portable) environment variable name; anything else is refused before the gate sees it. */
export const POSIX_ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** What a spec is resolved against (see `ProcessTerminalHostOptions`). */
export interface SpecDefaults {
  readonly shellPrefix: readonly string[];
  readonly cwd: string;
  readonly maxOutputBytes: number;
  readonly timeoutMs: number | undefined;
}

/**
 * Checks a `TerminalSpec` from a caller and resolves it, before the gate sees
 * it: every malformed or oversized field is `INVALID_SPEC`; the cwd is made
 * absolute, a command line gets the shell prefix, the output limit and the
 * timeout are clamped to the host's. The result is frozen.
 */
export class SpecResolver {
  readonly #settings: SpecDefaults;

  constructor(settings: SpecDefaults) {
    this.#settings = settings;
  }

  resolve(spec: TerminalSpec): ResolvedTerminalSpec {
    const invalid = (message: string): TermhostError => new TermhostError('INVALID_SPEC', message);
    if (typeof spec !== 'object' || spec === null) throw invalid('The spec must be an object');
    const { command, args, cwd, env, outputByteLimit, timeoutMs } = spec;
    if (typeof command !== 'string' || command.length === 0)
      throw invalid('command must be a non-empty string');
    if (command.includes('\0')) throw invalid('command must not contain NUL');
    if (
      args !== undefined &&
      (!Array.isArray(args) || !args.every((a) => typeof a === 'string' && !a.includes('\0')))
    ) {
      throw invalid('args must be an array of strings without NUL');
    }
    if (cwd !== undefined && (typeof cwd !== 'string' || cwd.includes('\0'))) {
      throw invalid('cwd must be a string without NUL');
    }
    const ownEnv: Record<string, string> = {};
    if (env !== undefined) {
      if (typeof env !== 'object' || env === null) throw invalid('env must be an object of strings');
      for (const [name, value] of Object.entries(env)) {
        if (!POSIX_ENV_NAME.test(name)) {
          throw invalid(
            `env name ${JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}…` : name)} is not a valid variable name: a name is a letter or _ followed by letters, digits or _`,
          );
        }
        if (typeof value !== 'string' || value.includes('\0'))
          throw invalid(`env ${name} must be a string without NUL`);
        ownEnv[name] = value;
      }
    }
    checkSizes(command, args, cwd, ownEnv);
    if (outputByteLimit !== undefined && !isNonNegativeInteger(outputByteLimit)) {
      throw invalid('outputByteLimit must be an integer ≥ 0');
    }
    if (timeoutMs !== undefined && !isPositiveInteger(timeoutMs))
      throw invalid('timeoutMs must be an integer ≥ 1');

    const argsCopy = args === undefined ? null : Object.freeze([...args]);
    const limit = Math.min(outputByteLimit ?? this.#settings.maxOutputBytes, this.#settings.maxOutputBytes);
    const timeout =
      timeoutMs === undefined
        ? this.#settings.timeoutMs
        : Math.min(timeoutMs, this.#settings.timeoutMs ?? Number.POSITIVE_INFINITY);
    return Object.freeze({
      command,
      args: argsCopy,
      cwd: resolvePath(this.#settings.cwd, cwd ?? '.'),
      env: Object.freeze(ownEnv),
      outputByteLimit: limit,
      argv: Object.freeze(
        argsCopy === null ? [...this.#settings.shellPrefix, command] : [command, ...argsCopy],
      ),
      ...(timeout === undefined ? {} : { timeoutMs: timeout }),
    });
  }
}

/** Refuses a request over the size limits (INVALID_SPEC), naming the field and its size. */
function checkSizes(
  command: string,
  args: readonly string[] | undefined,
  cwd: string | undefined,
  env: Readonly<Record<string, string>>,
): void {
  const tooLong = (what: string, bytes: number, limit: number): TermhostError =>
    new TermhostError('INVALID_SPEC', `${what} is ${bytes} bytes; the limit is ${limit}`, { bytes, limit });
  let total = 0;
  for (const [what, value] of [
    ['command', command] as const,
    ...(args ?? []).map((a, i) => [`args[${i}]`, a] as const),
  ]) {
    const bytes = Buffer.byteLength(value);
    if (bytes > MAX_ARGUMENT_BYTES) throw tooLong(what, bytes, MAX_ARGUMENT_BYTES);
    total += bytes + 1;
  }
  if (cwd !== undefined && Buffer.byteLength(cwd) > MAX_CWD_BYTES) {
    throw tooLong('cwd', Buffer.byteLength(cwd), MAX_CWD_BYTES);
  }
  for (const [name, value] of Object.entries(env)) {
    const bytes = Buffer.byteLength(name) + Buffer.byteLength(value) + 2;
    if (bytes > MAX_ARGUMENT_BYTES) throw tooLong(`env ${name}`, bytes, MAX_ARGUMENT_BYTES);
    total += bytes;
  }
  if (total > MAX_REQUEST_BYTES)
    throw tooLong('the request (command, args and env)', total, MAX_REQUEST_BYTES);
}

export function isNonNegativeInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

export function isPositiveInteger(value: unknown): value is number {
  return isNonNegativeInteger(value) && value > 0;
}
