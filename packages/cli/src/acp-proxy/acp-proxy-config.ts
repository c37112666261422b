import { isAbsolute, resolve } from 'node:path';
import type { Level } from 'pino';
import { LOG_LEVELS } from '../logging.js';
import { AUDIT_OPTIONS_USAGE, AUDIT_VALUED_OPTIONS, parseAuditTrailOptions } from '../serve/audit-options.js';
import type { ServeConfig } from '../serve/serve-config.js';

/**
 * Everything `termgate acp-proxy` was configured with: serve's settings
 * (policy, audit trail, shell, logging, cwd — with the same defaults) and
 * the agent to run. `cwd` is also where the agent starts.
 */
export interface AcpProxyConfig extends ServeConfig {
  /** The agent's argv: program and arguments. */
  readonly agentCommand: readonly string[];
}

export const ACP_PROXY_USAGE = `Usage: termgate acp-proxy [--policy FILE] [--audit FILE] [--audit-fsync] [--shell PATH] [--log-level LEVEL]
                          [--approval-timeout SECONDS] -- AGENT [ARG...]

Runs the ACP agent AGENT behind termgate: an editor launches this command as
if it were the agent. The agent's terminal/* requests are served by termgate
through the policy gate and recorded in the audit trail; everything else
passes through. stdout carries ACP only; logs go to stderr.
  --policy FILE      policy file (default: the shipped policies/default.yaml)
  --audit FILE       audit trail, JSON Lines (default: $XDG_STATE_HOME/termgate/audit.jsonl)
  --audit-fsync      fsync the audit trail after every record
  --shell PATH       bash-compatible shell for command lines (default: bash)
  --log-level LEVEL  ${LOG_LEVELS.join(', ')} or silent (default: warn)
  --approval-timeout SECONDS  how long the editor's person may take to answer an approval
                     question (policy decision ask); none = denied (default: 120)
${AUDIT_OPTIONS_USAGE}`;

export class AcpProxyUsageError extends Error {}

const VALUED = new Set<string>([
  '--policy',
  '--audit',
  '--shell',
  '--log-level',
  '--approval-timeout',
  ...AUDIT_VALUED_OPTIONS,
]);

/**
 * Options come first; the agent command follows `--` (or starts at the first
 * argument that is not an option), so the agent's own flags are never read
 * as ours.
 */
export function parseAcpProxyArgs(argv: readonly string[], cwd: string): AcpProxyConfig {
  const values = new Map<string, string>();
  let auditFsync = false;
  let index = 0;
  while (index < argv.length) {
    const token = argv[index]!;
    if (token === '--') {
      index++;
      break;
    }
    if (!token.startsWith('-')) break;
    if (token === '--audit-fsync') {
      auditFsync = true;
      index++;
      continue;
    }
    const eq = token.indexOf('=');
    const name = eq === -1 ? token : token.slice(0, eq);
    if (!VALUED.has(name)) throw new AcpProxyUsageError(`unknown option ${token}`);
    const value = eq === -1 ? argv[index + 1] : token.slice(eq + 1);
    if (value === undefined || value === '') throw new AcpProxyUsageError(`${name} needs a value`);
    values.set(name, value);
    index += eq === -1 ? 2 : 1;
  }
  const agentCommand = argv.slice(index);
  if (agentCommand.length === 0 || agentCommand[0] === '') {
    throw new AcpProxyUsageError('no agent command: give it after --');
  }
  const level = values.get('--log-level') ?? 'warn';
  if (level !== 'silent' && !LOG_LEVELS.includes(level as Level)) {
    throw new AcpProxyUsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, silent`);
  }
  const absolute = (path: string | undefined): string | null =>
    path === undefined ? null : isAbsolute(path) ? path : resolve(cwd, path);
  const policyPath = absolute(values.get('--policy'));
  const auditPath = absolute(values.get('--audit'));
  let audit: ReturnType<typeof parseAuditTrailOptions>;
  try {
    audit = parseAuditTrailOptions((name) => values.get(name), cwd);
  } catch (error) {
    throw new AcpProxyUsageError((error as Error).message);
  }
  const timeout = values.get('--approval-timeout');
  if (timeout !== undefined && (!/^\d+$/.test(timeout) || Number(timeout) < 1 || Number(timeout) > 86_400)) {
    throw new AcpProxyUsageError(
      `--approval-timeout must be a whole number of seconds from 1 to 86400, got "${timeout}"`,
    );
  }
  return {
    ...audit,
    ...(timeout !== undefined && { approvalTimeoutMs: Number(timeout) * 1000 }),
    policyPath,
    auditPath,
    auditFsync,
    shell: values.get('--shell') ?? null,
    logLevel: level as Level | 'silent',
    cwd,
    agentCommand,
  };
}
