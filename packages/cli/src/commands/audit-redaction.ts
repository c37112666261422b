import { parseCommandRedaction, type Redaction } from '@termgate/audit';
import { UsageError } from './usage.js';

/** `--redact-command` and `--redact-args` of `audit export` and `audit report` (docs/AUDIT.md, "Redaction"). */
export function redactionFrom(values: { 'redact-command'?: string; 'redact-args'?: boolean }): Redaction {
  let command: Redaction['command'] = { kind: 'keep' };
  if (values['redact-command'] !== undefined) {
    try {
      command = parseCommandRedaction(values['redact-command']);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
  }
  return { command, dropArgs: values['redact-args'] === true };
}

export const REDACTION_OPTIONS = {
  'redact-command': { type: 'string' },
  'redact-args': { type: 'boolean' },
} as const;
