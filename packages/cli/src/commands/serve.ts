import { isAbsolute, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Level } from 'pino';
import { closeInheritedDescriptors } from '../inherited-fds.js';
import { createStderrLogger, LOG_LEVELS } from '../logging.js';
import { AUDIT_OPTIONS_USAGE, parseAuditTrailOptions } from '../serve/audit-options.js';
import { buildServeContainer } from '../serve/composition-root.js';
import { startPolicyRuntime } from '../serve/policy-runtime.js';
import { ServeApplication } from '../serve/serve-application.js';
import type { ServeConfig } from '../serve/serve-config.js';
import type { CliIo } from './cli-io.js';

export const SERVE_USAGE = `Usage: termgate serve [--policy FILE] [--audit FILE] [--audit-fsync] [--shell PATH] [--log-level LEVEL]
                      [--audit-rotate-size SIZE] [--audit-rotate-age DURATION] [--audit-signing-key FILE]
                      [--approval-timeout SECONDS] [--approval-state-ttl SECONDS]

Serves MCP (2026-07-28 and 2025-11-25) on stdin/stdout. Logs go to stderr.
  --policy FILE      policy file (default: the shipped policies/default.yaml)
  --audit FILE       audit trail, JSON Lines (default: $XDG_STATE_HOME/termgate/audit.jsonl)
  --audit-fsync      fsync the audit trail after every record
  --shell PATH       bash for command lines (default: bash on PATH); must be bash
  --log-level LEVEL  ${LOG_LEVELS.join(', ')} or silent (default: info)
  --approval-timeout SECONDS    how long a 2025-11-25 client's person may take to answer an
                                approval question (policy decision ask); none = denied (default: 120)
  --approval-state-ttl SECONDS  how long a 2026-07-28 approval round trip's requestState is
                                accepted (default: 300; 0 makes every state expired)
${AUDIT_OPTIONS_USAGE}`;

/** Printed to stderr when a person runs `serve` in a terminal. */
export function connectHint(bin: string): string {
  const node = process.execPath;
  return `termgate speaks MCP on stdin/stdout: an MCP client launches it, a person does not type into it.
Register it with a client, for example:
  Claude Code: claude mcp add termgate -- ${node} ${bin} serve
  Codex (~/.codex/config.toml): [mcp_servers.termgate] command = "${node}" args = ["${bin}", "serve"]
  VS Code (.vscode/mcp.json): {"servers": {"termgate": {"type": "stdio", "command": "${node}", "args": ["${bin}", "serve"]}}}
Press Ctrl-D to stop.
`;
}

export class UsageError extends Error {}

export function parseServeArgs(argv: readonly string[], cwd: string): ServeConfig {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (positionals.length > 0) throw new UsageError(`unexpected argument: ${positionals[0]}`);
  const level = values['log-level'] ?? 'info';
  if (level !== 'silent' && !LOG_LEVELS.includes(level as Level)) {
    throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, silent`);
  }
  const absolute = (path: string | undefined): string | null =>
    path === undefined ? null : isAbsolute(path) ? path : resolve(cwd, path);
  let audit: ReturnType<typeof parseAuditTrailOptions>;
  try {
    audit = parseAuditTrailOptions(
      (name) => values[name.slice(2) as keyof typeof values] as string | undefined,
      cwd,
    );
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const timeout = seconds(values['approval-timeout'], '--approval-timeout', 1);
  const stateTtl = seconds(values['approval-state-ttl'], '--approval-state-ttl', 0);
  return {
    ...audit,
    ...(timeout !== undefined && { approvalTimeoutMs: timeout }),
    ...(stateTtl !== undefined && { approvalStateTtlMs: stateTtl }),
    policyPath: absolute(values.policy),
    auditPath: absolute(values.audit),
    auditFsync: values['audit-fsync'] ?? false,
    shell: values.shell ?? null,
    logLevel: level as Level | 'silent',
    cwd,
  };
}

/** A whole number of seconds ≥ `min` (at most a day), in ms; undefined when the flag is absent. */
function seconds(value: string | undefined, flag: string, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > 86_400) {
    throw new UsageError(`${flag} must be a whole number of seconds from ${min} to 86400, got "${value}"`);
  }
  return Number(value) * 1000;
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    options: {
      policy: { type: 'string' },
      audit: { type: 'string' },
      'audit-fsync': { type: 'boolean' },
      'audit-rotate-size': { type: 'string' },
      'audit-rotate-age': { type: 'string' },
      'audit-signing-key': { type: 'string' },
      'audit-checkpoint-every': { type: 'string' },
      'audit-checkpoint-interval': { type: 'string' },
      shell: { type: 'string' },
      'log-level': { type: 'string' },
      'approval-timeout': { type: 'string' },
      'approval-state-ttl': { type: 'string' },
    },
    strict: true,
    allowPositionals: true,
  });
}

/**
 * `termgate serve`. Resolves with the exit code once the server stopped:
 * on stdin EOF, SIGTERM or SIGINT every terminal is killed and the code is 0.
 */
export async function serveCommand(argv: readonly string[], io: CliIo): Promise<number> {
  let config: ServeConfig;
  try {
    config = parseServeArgs(argv, process.cwd());
  } catch (error) {
    io.stderr.write(`termgate serve: ${(error as Error).message}\n\n${SERVE_USAGE}`);
    return 2;
  }
  const logger = createStderrLogger(config.logLevel);
  // Before anything is spawned: commands must not inherit what our launcher left open.
  const closedFds = closeInheritedDescriptors();
  if (closedFds.length > 0) logger.debug({ fds: closedFds }, 'closed inherited descriptors');
  if ((io.stdin as { isTTY?: boolean }).isTTY) io.stderr.write(connectHint(process.argv[1] ?? 'termgate'));
  // The policy gate starts while the protocol already answers; no terminal
  // verb runs before it is ready. If it cannot start, serve stops with exit
  // code 1: no policy, no audit trail, no commands.
  let startFailed = false;
  const runtime = startPolicyRuntime(config, (line) => io.stderr.write(`${line}\n`));
  const container = buildServeContainer(config, logger, runtime);
  const app = container.get(ServeApplication);
  runtime.catch((error: unknown) => {
    startFailed = true;
    io.stderr.write(`termgate serve: refusing to start: ${(error as Error).message}\n`);
    void app.stop('the policy gate could not start');
  });
  const onSignal = (signal: NodeJS.Signals): void => {
    void app.stop(signal);
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  try {
    await app.run(io.stdin, io.stdout, { endOutputOnClose: io.stdout !== process.stdout });
    return startFailed ? 1 : 0;
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}
