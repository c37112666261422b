import { isAbsolute, resolve } from 'node:path';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import type { Level } from 'pino';
import { DEFAULT_LOG_LEVEL, LOG_FORMATS, LOG_LEVELS, type LogFormat } from '../logging.js';
import { AUDIT_OPTIONS_USAGE, AUDIT_VALUED_OPTIONS, parseAuditTrailOptions } from '../serve/audit-options.js';
import type { ServeConfig } from '../serve/serve-config.js';
import { UsageError, usageErrorFrom } from './usage.js';

/** The options `serve` and `acp-proxy` share, with the same names, texts and defaults. */
export const RUNTIME_OPTIONS_USAGE = `  --policy FILE      policy file (default: the shipped policies/default.yaml)
  --managed-policy FILE
                     a managed policy layer over --policy, where the system has none
                     (/etc/termgate/managed.yaml is in force whenever it exists; for
                     tests and administrators: docs/POLICY.md#managed)
  --audit FILE       audit trail, JSON Lines (default: $XDG_STATE_HOME/termgate/audit.jsonl)
  --audit-fsync      fsync the audit trail after every record
  --shell PATH       bash for command lines (default: bash on PATH); must be bash
  --log-level LEVEL  ${LOG_LEVELS.join(', ')} or silent (default: ${DEFAULT_LOG_LEVEL})
  --log-format FORMAT
                     json or pretty (default: pretty when stderr is a terminal, else json);
                     the audit trail's head at start and stop is printed at every level
  --approval-timeout SECONDS
                     how long a person may take to answer an approval question (policy
                     decision ask) sent to the client or editor; none = denied (default: 120)
  -h, --help         print this help and exit
${AUDIT_OPTIONS_USAGE}`;

/** The valued options among them. */
export const RUNTIME_VALUED_OPTIONS = [
  '--policy',
  '--managed-policy',
  '--audit',
  '--shell',
  '--log-level',
  '--log-format',
  '--approval-timeout',
  ...AUDIT_VALUED_OPTIONS,
] as const;

type ParseOptions = NonNullable<ParseArgsConfig['options']>;
type ParsedValues = Readonly<Record<string, string | boolean | (string | boolean)[] | undefined>>;

/**
 * Reads `argv` with `node:util` parseArgs (strict, operands allowed): the
 * shared options and the command's own `extra` ones. Its errors are usage
 * errors in our words (`usageErrorFrom`).
 */
export function parseRuntimeArgs(
  argv: readonly string[],
  extra: ParseOptions,
): { readonly values: ParsedValues; readonly positionals: readonly string[] } {
  const shared: ParseOptions = Object.fromEntries(
    RUNTIME_VALUED_OPTIONS.map((name) => [name.slice(2), { type: 'string' as const }]),
  );
  try {
    return parseArgs({
      args: [...argv],
      options: { ...shared, 'audit-fsync': { type: 'boolean' }, ...extra },
      strict: true,
      allowPositionals: true,
    });
  } catch (error) {
    throw usageErrorFrom(error);
  }
}

/** The `get` of `runtimeConfig` over parsed values: `--policy` reads `values.policy`. */
export function runtimeValue(values: ParsedValues): (name: string) => string | undefined {
  return (name) => {
    const value = values[name.slice(2)];
    return typeof value === 'string' ? value : undefined;
  };
}

/** A whole number of seconds from `min` to a day, in ms; undefined when the option is absent. Throws `UsageError`. */
export function secondsOption(value: string | undefined, name: string, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > 86_400) {
    throw new UsageError(`${name} must be a whole number of seconds from ${min} to 86400, got "${value}"`);
  }
  return Number(value) * 1000;
}

/**
 * Builds the shared part of the config from the options read (`get` returns
 * an option's value, undefined when absent). Throws `UsageError` on a bad value.
 */
export function runtimeConfig(
  get: (name: string) => string | undefined,
  auditFsync: boolean,
  cwd: string,
): ServeConfig {
  const level = get('--log-level') ?? DEFAULT_LOG_LEVEL;
  if (level !== 'silent' && !LOG_LEVELS.includes(level as Level)) {
    throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, silent`);
  }
  const format = get('--log-format');
  if (format !== undefined && !LOG_FORMATS.includes(format as LogFormat)) {
    throw new UsageError(`--log-format must be ${LOG_FORMATS.join(' or ')}`);
  }
  const absolute = (path: string | undefined): string | null =>
    path === undefined ? null : isAbsolute(path) ? path : resolve(cwd, path);
  let audit: ReturnType<typeof parseAuditTrailOptions>;
  try {
    audit = parseAuditTrailOptions(get, cwd);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const approvalTimeoutMs = secondsOption(get('--approval-timeout'), '--approval-timeout', 1);
  return {
    ...audit,
    ...(approvalTimeoutMs !== undefined && { approvalTimeoutMs }),
    policyPath: absolute(get('--policy')),
    ...(get('--managed-policy') !== undefined && { managedPolicyPath: absolute(get('--managed-policy')) }),
    auditPath: absolute(get('--audit')),
    auditFsync,
    shell: get('--shell') ?? null,
    logLevel: level as Level | 'silent',
    logFormat: (format as LogFormat | undefined) ?? null,
    cwd,
  };
}
