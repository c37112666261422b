import type { ChainHead } from '@termgate/audit';
import { type LoadedPolicy, type PolicyGate, recordServerStart, recordServerStop } from '@termgate/policy';
import type { Notices } from '../logging.js';
import type { ServeConfig } from '../serve/serve-config.js';
import { TERMGATE_VERSION } from '../version.js';
import { auditPathOf, type PolicyParts } from './policy-parts.js';
import { anchorOf, type PolicyRuntime } from './policy-runtime.js';

/**
 * The started runtime (POLICY_RUNTIME_STARTED): records `server-start` once
 * the parts stand and the gate is built, then says which policy, trail and
 * sandbox are in use. If the record cannot be written, every part is
 * closed and it throws: nothing runs.
 */
export async function startPolicyRuntime(
  parts: PolicyParts,
  gate: PolicyGate,
  config: ServeConfig,
  notices: Notices,
): Promise<PolicyRuntime> {
  const { policy, managed, judge, sink, sandbox } = parts;
  try {
    const network = policy.sandbox.network;
    recordServerStart(sink, {
      policy: {
        path: policy.path,
        sha256: policy.sha256,
        ...(managed !== null && { managed: { path: managed.path, sha256: managed.sha256 } }),
      },
      version: TERMGATE_VERSION,
      sandbox: {
        mode: policy.sandbox.mode,
        network: typeof network === 'string' ? network : network.allow,
        ...(sandbox !== null && { layers: sandbox.layers }),
      },
    });
  } catch (error) {
    sandbox?.close();
    sink.close();
    await judge.close();
    throw error;
  }
  const auditPath = auditPathOf(config);
  notices.notice(`policy ${policy.path} (sha256 ${policy.sha256.slice(0, 12)}…); audit trail ${auditPath}`, {
    policyPath: policy.path,
    policySha256: policy.sha256,
    auditPath,
  });
  if (managed !== null) {
    notices.notice(
      `managed policy ${managed.path} (sha256 ${managed.sha256.slice(0, 12)}…): the workspace policy can only tighten it`,
      { managedPolicyPath: managed.path, managedPolicySha256: managed.sha256 },
    );
  }
  notices.notice(
    sandbox === null
      ? 'sandbox off: commands run unconfined (the policy still judges every line)'
      : `sandbox on (${sandbox.layers.tier?.startsWith('landlock') ? 'landlock tier' : 'bubblewrap'}): writable ${policy.sandbox.writable.join(', ') || '(none)'}; network ${describeNetwork(policy.sandbox.network)}`,
  );
  notices.anchor(`audit head at start: ${anchorOf(sink.head)} (keep it: termgate audit verify --anchor)`, {
    auditHead: anchorOf(sink.head),
    auditPath,
  });
  let stopped = false;
  let finalHead: ChainHead | null = null;
  return {
    policy,
    gate,
    sink,
    auditPath,
    sandbox,
    auditSigningKeyPath: config.auditSigningKeyPath ?? null,
    stop: (reason) => {
      if (stopped) return finalHead;
      stopped = true;
      let stopRecorded = false;
      try {
        recordServerStop(sink, { reason });
        stopRecorded = true;
      } catch (error) {
        // Never thrown on: the process still exits with the code it owes its caller.
        // It carries the last head: an anchor, printed at every level.
        notices.anchor(
          `the audit trail's stop record was not written: ${(error as Error).message}; last head ${anchorOf(sink.head)} (the trail will verify as open or cut)`,
          { auditHead: anchorOf(sink.head), auditPath },
        );
      } finally {
        try {
          // With a signing key, close writes the final checkpoint after the stop record.
          sink.close();
        } catch (error) {
          notices.warning(`the audit trail's final checkpoint was not written: ${(error as Error).message}`);
        } finally {
          sandbox?.close();
          void judge.close();
        }
      }
      // The head after the final checkpoint, when there is one.
      if (stopRecorded) finalHead = sink.head;
      return finalHead;
    },
  };
}

function describeNetwork(network: LoadedPolicy['sandbox']['network']): string {
  return typeof network === 'string' ? network : `allowlist (${network.allow.join(', ')})`;
}
