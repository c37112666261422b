import type { Level } from 'pino';
import type { LogFormat } from '../logging.js';
import type { AuditTrailOptions } from './audit-options.js';

/** Everything `termgate serve` (and `acp-proxy`) was configured with, after parsing its arguments. */
export interface ServeConfig extends AuditTrailOptions {
  readonly policyPath: string | null;
  /**
   * `--managed-policy`: a managed layer where the system has none
   * (`managedPolicyPath` of @termgate/policy decides which file is in force).
   */
  readonly managedPolicyPath?: string | null;
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
  /** How long a legacy MCP approval question waits for its answer (ms); absent: the core's default (120 s). */
  readonly approvalTimeoutMs?: number;
  /** How long a modern MCP approval's `requestState` stays valid (ms); absent: the core's default (5 min). */
  readonly approvalStateTtlMs?: number;
  /** `--http HOST:PORT` and its options: serve Streamable HTTP instead of stdio. Absent: stdio. */
  readonly http?: HttpServeConfig;
}

/** `termgate serve --http …`: where to listen and what to accept (packages/transport-http). */
export interface HttpServeConfig {
  readonly host: string;
  readonly port: number;
  /** `--tls-key` / `--tls-cert`, absolute paths, both or neither: HTTPS. */
  readonly tls?: { readonly keyPath: string; readonly certPath: string };
  /** `--allowed-origin`, repeatable: origins a browser-sent request may come from (default none). */
  readonly allowedOrigins: readonly string[];
  /** `--allowed-host`, repeatable: Host header names accepted besides the loopback names and the bound host. */
  readonly allowedHosts: readonly string[];
}
