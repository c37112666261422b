import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * Where `serve` writes the audit trail when no `--audit` is given:
 * `$XDG_STATE_HOME/termgate/audit.jsonl`, else `~/.local/state/termgate/audit.jsonl`.
 * serve always audits; it names the file on stderr at start.
 */
export function defaultAuditPath(env: NodeJS.ProcessEnv = process.env): string {
  const stateHome =
    env.XDG_STATE_HOME && env.XDG_STATE_HOME !== '' ? env.XDG_STATE_HOME : join(homedir(), '.local', 'state');
  return join(stateHome, 'termgate', 'audit.jsonl');
}
