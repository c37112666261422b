/**
 * The judge's worker: `WorkerThreadCommandJudge` starts it as a worker
 * thread (`node:worker_threads`, messages on `parentPort`),
 * `ChildProcessCommandJudge` forks it as a process (messages on the IPC
 * channel). It parses the policy text it is sent, builds the engine
 * (web-tree-sitter and the bash grammar live here, not in the server's main
 * thread), answers `ready` or `failed`, then answers every `judge` with a
 * decision. Protocol: `judge-worker-protocol.ts`.
 *
 * It never writes to stdout, imports only what judging needs, and ends when
 * its parent goes away (the IPC channel closed; a thread ends with its process).
 */

import { parentPort } from 'node:worker_threads';
import { ownThreadId } from '../cpu-clock.js';
import type { CommandRequest, PolicyDecision } from '../decision.js';
import { createPolicyEngine, type PolicyEngine } from '../engine/policy-engine.js';
import { createLayeredEngine, type LayeredPolicyEngine } from '../layers/layered-engine.js';
import { parsePolicyText } from '../policy-file/load-policy.js';
import { formatIssue, PolicyError } from '../policy-file/policy-error.js';
import type { FromWorker, ToWorker, WorkerStartError } from './judge-worker-protocol.js';

type FromWorkerReady = Extract<FromWorker, { type: 'ready' }>;

let engine: PolicyEngine | LayeredPolicyEngine | null = null;
let initialized = false;

/** Sends to the parent; `then` runs once the message is handed over (at once for a thread). */
function send(message: FromWorker, then?: () => void): void {
  if (parentPort !== null) {
    parentPort.postMessage(message);
    then?.();
  } else if (process.connected) {
    if (then === undefined) process.send?.(message);
    else process.send?.(message, () => then());
  } else {
    then?.();
  }
}

async function init(message: Extract<ToWorker, { type: 'init' }>): Promise<void> {
  try {
    const policy = parsePolicyText(message.policyText, message.policyPath);
    const options = {
      requirePassingTests: message.requirePassingTests,
      checkExamples: message.checkExamples ?? true,
    };
    let layered: Pick<FromWorkerReady, 'managedSha256' | 'loosenings'> = {};
    if (message.managed === undefined) {
      engine = await createPolicyEngine(policy, options);
    } else {
      const managed = parsePolicyText(message.managed.text, message.managed.path);
      const built = await createLayeredEngine(managed, policy, options);
      engine = built;
      layered = { managedSha256: managed.sha256, loosenings: built.loosenings() };
    }
    const tid = ownThreadId();
    send({
      type: 'ready',
      sha256: policy.sha256,
      ...layered,
      ...(tid !== null && { pid: process.pid, tid }),
    });
  } catch (error) {
    // End once the answer is handed over: the parent rejects `start` with it.
    // (In a worker thread, `process.exit` ends the thread, not the process.)
    send({ type: 'failed', error: flatten(error) }, () => process.exit(1));
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

function receive(message: ToWorker): void {
  if (message.type === 'init') {
    if (initialized) return;
    initialized = true;
    void init(message);
  } else if (message.type === 'judge') {
    send({ type: 'decision', id: message.id, decision: judge(message.request) });
  }
}

if (parentPort !== null) {
  parentPort.on('message', receive);
} else if (process.send) {
  process.on('disconnect', () => process.exit(0));
  process.on('message', receive);
} else {
  process.stderr.write(
    'judge-worker: start it through WorkerThreadCommandJudge or ChildProcessCommandJudge (it needs a parent to talk to)\n',
  );
  process.exit(2);
}
