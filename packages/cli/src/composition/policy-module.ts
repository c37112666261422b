import { existsSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AUDIT_SINK, type AuditSink, type ChainHead, loadSigningKey } from '@termgate/audit';
import { CheckpointingAuditSink, PinoAuditSink } from '@termgate/audit/adapters';
import {
  assertBashCompatibleShell,
  COMMAND_JUDGE,
  DEFAULT_POLICY_PATH,
  INSTALL_ROOT,
  type LoadedPolicy,
  loadPolicyFile,
  PolicyGate,
  recordServerStart,
  recordServerStop,
} from '@termgate/policy';
import { WorkerThreadCommandJudge } from '@termgate/policy/adapters';
import { GATE, TERMINAL_OBSERVER } from '@termgate/termhost';
import { ContainerModule, type ResolutionContext } from 'inversify';
import type { Notices } from '../logging.js';
import { defaultAuditPath } from '../serve/default-audit-path.js';
import { PolicyCheckCache } from '../serve/policy-check-cache.js';
import { type SandboxRuntime, startSandbox } from '../serve/sandbox-runtime.js';
import type { ServeConfig } from '../serve/serve-config.js';
import { TERMGATE_VERSION } from '../version.js';
import type { CompositionOptions } from './composition-options.js';
import { anchorOf, type ChainedAuditSink, type PolicyRuntime } from './policy-runtime.js';
import {
  COMPOSITION_OPTIONS,
  LOADED_POLICY,
  NOTICES,
  POLICY_RUNTIME_STARTED,
  SANDBOX_RUNTIME,
  SERVE_CONFIG,
} from './tokens.js';

/**
 * The policy side of the graph: the loaded policy, the command judge (a
 * worker thread), the audit sink, the sandbox, the gate (also the
 * terminals' observer), and the started runtime that ties them together.
 * This module imports @termgate/policy (the parser, YAML, the schema), so
 * the composition root loads it only once the protocol already answers.
 *
 * Every binding is a singleton; the start-up order fails closed: the policy
 * parses and validates; `--shell` is bash; then, at the same time, the judge
 * starts (it parsed the exact text that was hashed, and its examples and
 * embedded tests pass, or passed before for this text and version) while
 * the signing key reads, the trail opens and the sandbox starts; the trail
 * takes `server-start` once all of them stand. A failure
 * throws after closing whatever had started, and nothing runs.
 */
export const policyModule = new ContainerModule((options) => {
  options.bind<LoadedPolicy>(LOADED_POLICY).toDynamicValue(async (context) => {
    const config = context.get<ServeConfig>(SERVE_CONFIG);
    const policyPath = config.policyPath ?? DEFAULT_POLICY_PATH;
    if (config.policyPath === null)
      context.get<Notices>(NOTICES).notice(`no --policy given: using the default policy ${policyPath}`);
    const policy = await loadPolicyFile(policyPath);
    if (config.shell !== null) await assertBashCompatibleShell(config.shell);
    return policy;
  });

  // Commands are judged in a worker thread, sent the exact policy text
  // loaded and hashed here: the bash parser is never initialised and never
  // parses in the main thread (its grammar wasm and heap live in the worker).
  // The rules' examples and the embedded tests run once per policy text and
  // termgate version: with the sandbox on, a passing run is remembered in the
  // audit trail's directory, which no command can reach (`PolicyCheckCache`).
  options.bind<WorkerThreadCommandJudge>(COMMAND_JUDGE).toDynamicValue(async (context) => {
    const policy = await context.getAsync<LoadedPolicy>(LOADED_POLICY);
    const config = context.get<ServeConfig>(SERVE_CONFIG);
    const { judgeWorkerPath } = context.get<CompositionOptions>(COMPOSITION_OPTIONS);
    const cache = policy.sandbox.mode === 'required' ? policyCheckCache(auditPathOf(config)) : null;
    const checked = cache?.passed(policy.text) ?? false;
    const judge = await WorkerThreadCommandJudge.start({
      policyPath: policy.path,
      policyText: policy.text,
      requirePassingTests: !checked,
      checkExamples: !checked,
      ...(judgeWorkerPath !== undefined && { workerPath: judgeWorkerPath }),
    });
    // The worker confirmed it parsed the text it was sent; that text must be the file that was hashed.
    if (judge.sha256 !== policy.sha256) {
      await judge.close();
      throw new Error(
        `the policy judge parsed sha256 ${judge.sha256}, not the file's ${policy.sha256} (is ${policy.path} valid UTF-8?)`,
      );
    }
    // Only now: the start resolved, so the examples and the tests passed.
    if (!checked) cache?.record(policy.text);
    return judge;
  });

  options.bind<ChainedAuditSink>(AUDIT_SINK).toDynamicValue((context) => {
    const config = context.get<ServeConfig>(SERVE_CONFIG);
    const notices = context.get<Notices>(NOTICES);
    // Read the key before the trail opens: a bad key refuses the start, and nothing later reads the file.
    const keyPath = config.auditSigningKeyPath ?? null;
    const signingKey = keyPath === null ? null : loadSigningKey(keyPath);
    const trail = PinoAuditSink.open(auditPathOf(config), {
      mkdir: true,
      fsync: config.auditFsync,
      service: { name: 'termgate', version: TERMGATE_VERSION },
      ...(config.auditRotation === undefined ? {} : { rotation: config.auditRotation }),
    });
    if (signingKey === null) return trail;
    return new CheckpointingAuditSink(trail, {
      privateKey: signingKey,
      ...config.auditCheckpoint,
      onError: (error) => notices.warning(`audit checkpoint failed: ${(error as Error).message}`),
    });
  });

  options.bind<SandboxRuntime | null>(SANDBOX_RUNTIME).toDynamicValue(async (context) => {
    const config = context.get<ServeConfig>(SERVE_CONFIG);
    const { judgeWorkerPath } = context.get<CompositionOptions>(COMPOSITION_OPTIONS);
    const policy = await context.getAsync<LoadedPolicy>(LOADED_POLICY);
    return startSandbox(
      policy,
      {
        policyPath: policy.path,
        auditPath: auditPathOf(config),
        installRoot: INSTALL_ROOT,
        signingKeyPath: config.auditSigningKeyPath ?? null,
        // Tests that run the sources name the built judge worker; the profiler's is its sibling.
        ...(judgeWorkerPath !== undefined && {
          profilerWorkerPath: join(dirname(judgeWorkerPath), 'profiler-worker.js'),
        }),
      },
      await context.getAsync<AuditSink>(AUDIT_SINK),
    );
  });

  options.bind<PolicyGate>(GATE).toDynamicValue(async (context) => {
    const policy = await context.getAsync<LoadedPolicy>(LOADED_POLICY);
    const sandbox = await context.getAsync<SandboxRuntime | null>(SANDBOX_RUNTIME);
    return new PolicyGate(
      await context.getAsync<WorkerThreadCommandJudge>(COMMAND_JUDGE),
      await context.getAsync<AuditSink>(AUDIT_SINK),
      { path: policy.path, sha256: policy.sha256 },
      sandbox === null ? {} : { sandbox: sandbox.profiler },
    );
  });
  // The gate records spawns and exits (with output digests) as the terminals' observer.
  options.bind(TERMINAL_OBSERVER).toService(GATE);

  options.bind<PolicyRuntime>(POLICY_RUNTIME_STARTED).toDynamicValue(startPolicyRuntime);
});

/** The start-up check cache in the trail's directory (canonical, when it exists). */
function policyCheckCache(auditPath: string): PolicyCheckCache {
  const dir = dirname(auditPath);
  return PolicyCheckCache.in(existsSync(dir) ? realpathSync(dir) : dir, TERMGATE_VERSION);
}

function auditPathOf(config: ServeConfig): string {
  return config.auditPath ?? defaultAuditPath();
}

/** Resolves the policy side in its fail-closed order (see `policyModule`) and records `server-start`. */
async function startPolicyRuntime(context: ResolutionContext): Promise<PolicyRuntime> {
  const config = context.get<ServeConfig>(SERVE_CONFIG);
  const notices = context.get<Notices>(NOTICES);
  const policy = await context.getAsync<LoadedPolicy>(LOADED_POLICY);
  // The judge's worker starts while the trail opens and the sandbox starts;
  // the gate waits for all of them, and a failure of any closes the others.
  const parts: { sink?: ChainedAuditSink; sandbox?: SandboxRuntime | null } = {};
  const [judged, stood] = await Promise.allSettled([
    context.getAsync<WorkerThreadCommandJudge>(COMMAND_JUDGE),
    (async () => {
      parts.sink = await context.getAsync<ChainedAuditSink>(AUDIT_SINK);
      parts.sandbox = await context.getAsync<SandboxRuntime | null>(SANDBOX_RUNTIME);
    })(),
  ]);
  if (judged.status === 'rejected' || stood.status === 'rejected') {
    parts.sandbox?.close();
    parts.sink?.close();
    if (judged.status === 'fulfilled') await judged.value.close();
    throw judged.status === 'rejected' ? judged.reason : (stood as PromiseRejectedResult).reason;
  }
  const judge = judged.value;
  const sink = parts.sink as ChainedAuditSink;
  const sandbox = parts.sandbox ?? null;
  let gate: PolicyGate;
  try {
    gate = await context.getAsync<PolicyGate>(GATE);
    const network = policy.sandbox.network;
    recordServerStart(sink, {
      policy: { path: policy.path, sha256: policy.sha256 },
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
  notices.notice(
    sandbox === null
      ? 'sandbox off: commands run unconfined (the policy still judges every line)'
      : `sandbox on (bubblewrap): writable ${policy.sandbox.writable.join(', ') || '(none)'}; network ${describeNetwork(policy.sandbox.network)}`,
  );
  notices.anchor(`audit head at start: ${anchorOf(sink.head)} (keep it: termgate audit verify --anchor)`, {
    auditHead: anchorOf(sink.head),
    auditPath,
  });
  const opened = sink;
  const started = sandbox;
  let stopped = false;
  let finalHead: ChainHead | null = null;
  return {
    policy,
    gate,
    sink: opened,
    auditPath,
    sandbox: started,
    auditSigningKeyPath: config.auditSigningKeyPath ?? null,
    stop: (reason) => {
      if (stopped) return finalHead;
      stopped = true;
      let stopRecorded = false;
      try {
        recordServerStop(opened, { reason });
        stopRecorded = true;
      } catch (error) {
        // Never thrown on: the process still exits with the code it owes its caller.
        // It carries the last head: an anchor, printed at every level.
        notices.anchor(
          `the audit trail's stop record was not written: ${(error as Error).message}; last head ${anchorOf(opened.head)} (the trail will verify as open or cut)`,
          { auditHead: anchorOf(opened.head), auditPath },
        );
      } finally {
        try {
          // With a signing key, close writes the final checkpoint after the stop record.
          opened.close();
        } catch (error) {
          notices.warning(`the audit trail's final checkpoint was not written: ${(error as Error).message}`);
        } finally {
          started?.close();
          void judge.close();
        }
      }
      // The head after the final checkpoint, when there is one.
      if (stopRecorded) finalHead = opened.head;
      return finalHead;
    },
  };
}

function describeNetwork(network: LoadedPolicy['sandbox']['network']): string {
  return typeof network === 'string' ? network : `allowlist (${network.allow.join(', ')})`;
}
