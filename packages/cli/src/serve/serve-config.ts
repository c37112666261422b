import type { Level } from 'pino';
import type { LogFormat } from '../logging.js';
import type { AuditTrailOptions } from './audit-options.js';

/** Everything `termgate serve` (and `acp-proxy`) was configured with, after parsing its arguments. */
export interface ServeConfig extends AuditTrailOptions {
  readonly policyPath: string | null;
  readonly auditPath: string | null;
  /** fsync the audit trail after every record. */
  readonly auditFsync: boolean;
  /** The shell that runs command lines; `null` for the default (bash on PATH). */
  readonly shell: string | null;
  readonly logLevel: Level | 'silent';
  /** `--log-format`; null: `pretty` when stderr is a terminal, else `json`. */
  readonly logFormat: LogFormat | null;
  /** Directory relative cwds resolve against. */
  readonly cwd: string;
}
