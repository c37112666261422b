import { type ParseArgsConfig, parseArgs } from 'node:util';
import { UsageError, usageErrorFrom } from './usage.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** Strict `parseArgs` whose errors are usage errors; `files` are the positionals (at least `min`, at most `max`). */
export function parseAuditArgs<T extends Options>(
  argv: readonly string[],
  options: T,
  min = 1,
  max = 1,
): {
  files: string[];
  values: ReturnType<
    typeof parseArgs<{ args: string[]; options: T; allowPositionals: true; strict: true }>
  >['values'];
} {
  let parsed: ReturnType<
    typeof parseArgs<{ args: string[]; options: T; allowPositionals: true; strict: true }>
  >;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (error) {
    throw usageErrorFrom(error);
  }
  const count = parsed.positionals.length;
  if (count < min || count > max) {
    throw new UsageError(
      min === max && min === 1
        ? 'expected exactly one FILE'
        : max === 0
          ? 'unexpected argument'
          : 'expected FILE…',
    );
  }
  return { files: parsed.positionals, values: parsed.values };
}
