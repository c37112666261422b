/**
 * The process `ChildProcessCommandJudge` forks: it parses the policy text it
 * is sent, builds the engine (web-tree-sitter and the bash grammar live
 * here, not in the server), answers `ready` or `failed`, then answers every
 * `judge` with a decision. Protocol: `judge-worker-protocol.ts`.
 *
 * It never writes to stdout (the parent ignores it anyway), imports only
 * what judging needs, and exits when the IPC channel closes (parent gone).
 */

import type { CommandRequest, PolicyDecision } from '../decision.js';
import { createPolicyEngine, type PolicyEngine } from '../engine/policy-engine.js';
import { parsePolicyText } from '../policy-file/load-policy.js';
import { formatIssue, PolicyError } from '../policy-file/policy-error.js';
import type { FromWorker, ToWorker, WorkerStartError } from './judge-worker-protocol.js';

let engine: PolicyEngine | null = null;
let initialized = false;

function send(message: FromWorker): void {
  if (process.connected) process.send?.(message);
}

async function init(message: Extract<ToWorker, { type: 'init' }>): Promise<void> {
  try {
    const policy = parsePolicyText(message.policyText, message.policyPath);
    engine = await createPolicyEngine(policy, { requirePassingTests: message.requirePassingTests });
    send({ type: 'ready', sha256: policy.sha256 });
  } catch (error) {
    // Exit once the answer is written: the parent rejects `start` with it.
    if (process.connected) process.send?.({ type: 'failed', error: flatten(error) }, () => process.exit(1));
    else process.exit(1);
  }
}

function judge(request: CommandRequest): PolicyDecision {
  if (engine === null) return denied('the judge worker has no policy loaded');
  try {
    return engine.judge(request);
  } catch (error) {
    return denied(`the judge worker failed (${error instanceof Error ? error.message : String(error)})`);
  }
}

function denied(why: string): PolicyDecision {
  return { decision: 'deny', ruleIds: [], reason: `denied: ${why}`, subcommands: [], resolvedCwd: null };
}

function flatten(error: unknown): WorkerStartError {
  if (error instanceof PolicyError) {
    const suffix = error.issues.length > 0 ? `\n${error.issues.map(formatIssue).join('\n')}` : '';
    const headline = error.message.endsWith(suffix)
      ? error.message.slice(0, error.message.length - suffix.length)
      : error.message;
    return { kind: 'policy', code: error.code, headline, issues: error.issues };
  }
  return { kind: 'other', message: error instanceof Error ? error.message : String(error) };
}

if (!process.send) {
  process.stderr.write('judge-worker: start it through ChildProcessCommandJudge (it needs an IPC channel)\n');
  process.exit(2);
}

process.on('disconnect', () => process.exit(0));
process.on('message', (message: ToWorker) => {
  if (message.type === 'init') {
    if (initialized) return;
    initialized = true;
    void init(message);
  } else if (message.type === 'judge') {
    send({ type: 'decision', id: message.id, decision: judge(message.request) });
  }
});
