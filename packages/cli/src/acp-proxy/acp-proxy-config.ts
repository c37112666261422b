import {
  parseRuntimeArgs,
  RUNTIME_OPTIONS_USAGE,
  RUNTIME_VALUED_OPTIONS,
  runtimeConfig,
  runtimeValue,
} from '../commands/runtime-options.js';
import { UsageError } from '../commands/usage.js';
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

export const ACP_PROXY_USAGE = `Usage: termgate acp-proxy [OPTION]... -- AGENT [ARG...]

Runs the ACP agent AGENT behind termgate: an editor launches this command as
if it were the agent. The agent's terminal/* requests are served by termgate
through the policy gate and recorded in the audit trail; everything else
passes through. stdout carries ACP only; logs go to stderr.
${RUNTIME_OPTIONS_USAGE}`;

const VALUED = new Set<string>(RUNTIME_VALUED_OPTIONS);

/** Where the agent command starts in `argv`: after `--`, or at the first argument that is not an option. */
export function agentCommandStart(argv: readonly string[]): number {
  let index = 0;
  while (index < argv.length) {
    const token = argv[index]!;
    if (token === '--') return index;
    if (!token.startsWith('-')) return index;
    index += VALUED.has(token) ? 2 : 1;
  }
  return argv.length;
}

/**
 * Options come first; the agent command follows `--` (or starts at the first
 * argument that is not an option), so the agent's own flags are never read
 * as ours. The options are read as serve reads them (`node:util` parseArgs,
 * strict), and none may be empty. Throws `UsageError`.
 */
export function parseAcpProxyArgs(argv: readonly string[], cwd: string): AcpProxyConfig {
  const start = agentCommandStart(argv);
  const { values, positionals } = parseRuntimeArgs(argv.slice(0, start), {});
  // Only a lone `-` is left as an operand before the agent command: it is no option of ours.
  if (positionals.length > 0) throw new UsageError(`unknown option ${positionals[0]}`);
  for (const [name, value] of Object.entries(values)) {
    if (value === '') throw new UsageError(`--${name} needs a value`);
  }
  const agentCommand = argv.slice(argv[start] === '--' ? start + 1 : start);
  if (agentCommand.length === 0 || agentCommand[0] === '') {
    throw new UsageError('no agent command: give it after --');
  }
  return { ...runtimeConfig(runtimeValue(values), values['audit-fsync'] === true, cwd), agentCommand };
}
