import { readFileSync } from 'node:fs';
import { AuditError } from '@termgate/audit';

/** Every record of an audit file, parsed (the file must be well formed). */
export function records(file: string): Record<string, unknown>[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The `AuditError` code `fn` throws, or undefined when it does not throw. */
export function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return AuditError.is(error) ? error.code : `not an AuditError: ${String(error)}`;
  }
  return undefined;
}
