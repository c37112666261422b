import type { Level } from 'pino';
import type { AuditTrailOptions } from './audit-options.js';

/** Everything `termgate serve` was configured with, after parsing its arguments. */
export interface ServeConfig extends AuditTrailOptions {
  readonly policyPath: string | null;
  readonly auditPath: string | null;
  /** fsync the audit trail after every record. */
  readonly auditFsync: boolean;
  /** The shell that runs command lines; `null` for the default (bash on PATH). */
  readonly shell: string | null;
  readonly logLevel: Level | 'silent';
  /** Directory relative cwds resolve against. */
  readonly cwd: string;
  /** How long a legacy MCP approval question waits for its answer (ms); absent: the core's default (120 s). */
  readonly approvalTimeoutMs?: number;
  /** How long a modern MCP approval's `requestState` stays valid (ms); absent: the core's default (5 min). */
  readonly approvalStateTtlMs?: number;
}

export const SERVE_CONFIG: unique symbol = Symbol.for('termgate.ServeConfig');
export const ROOT_LOGGER: unique symbol = Symbol.for('termgate.RootLogger');
export const SCHEMA_VALIDATOR: unique symbol = Symbol.for('termgate.SchemaValidator');
export const SHUTDOWN_HOOKS: unique symbol = Symbol.for('termgate.ShutdownHooks');

/** Runs once every terminal ended, in order, during shutdown (e.g. the audit trail's stop record). */
export type ShutdownHook = (reason: string) => void | Promise<void>;
