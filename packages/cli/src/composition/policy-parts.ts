import { existsSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { loadSigningKey } from '@termgate/audit';
import { CheckpointingAuditSink, FileAuditSink } from '@termgate/audit/adapters';
import {
  assertBashCompatibleShell,
  DEFAULT_POLICY_PATH,
  INSTALL_ROOT,
  type LoadedPolicy,
  loadPolicyFile,
} from '@termgate/policy';
import { WorkerThreadCommandJudge } from '@termgate/policy/adapters';
import type { Notices } from '../logging.js';
import { defaultAuditPath } from '../serve/default-audit-path.js';
import { PolicyCheckCache } from '../serve/policy-check-cache.js';
import { type SandboxRuntime, startSandbox } from '../serve/sandbox-runtime.js';
import type { ServeConfig } from '../serve/serve-config.js';
import { TERMGATE_VERSION } from '../version.js';
import type { CompositionOptions } from './composition-options.js';
import type { ChainedAuditSink } from './policy-runtime.js';

/** The policy side's parts, started (POLICY_PARTS); the gate and the runtime are built from them. */
export interface PolicyParts {
  readonly policy: LoadedPolicy;
  readonly judge: WorkerThreadCommandJudge;
  readonly sink: ChainedAuditSink;
  /** The started sandbox, or null when the policy's sandbox mode is `off`. */
  readonly sandbox: SandboxRuntime | null;
}

/**
 * Starts the parts in their fail-closed order: the policy parses and
 * validates; `--shell` is bash; then, at the same time, the judge starts (it
 * parsed the exact text that was hashed, and its examples and embedded tests
 * pass, or passed before for this text and version) while the signing key
 * reads, the trail opens and the sandbox starts. A failure of any throws
 * once all of them settled, after closing whatever had started.
 */
export async function startPolicyParts(
  config: ServeConfig,
  notices: Notices,
  options: CompositionOptions,
): Promise<PolicyParts> {
  const policy = await loadServePolicy(config, notices);
  const parts: { sink?: ChainedAuditSink; sandbox?: SandboxRuntime | null } = {};
  const [judged, stood] = await Promise.allSettled([
    startJudge(policy, config, options),
    (async () => {
      parts.sink = openAuditSink(config, notices);
      parts.sandbox = await startServeSandbox(policy, config, options, parts.sink);
    })(),
  ]);
  if (judged.status === 'rejected' || stood.status === 'rejected') {
    parts.sandbox?.close();
    parts.sink?.close();
    if (judged.status === 'fulfilled') await judged.value.close();
    throw judged.status === 'rejected' ? judged.reason : (stood as PromiseRejectedResult).reason;
  }
  return {
    policy,
    judge: judged.value,
    sink: parts.sink as ChainedAuditSink,
    sandbox: parts.sandbox ?? null,
  };
}

/** The audit trail's file: `--audit`, else the default. */
export function auditPathOf(config: ServeConfig): string {
  return config.auditPath ?? defaultAuditPath();
}

async function loadServePolicy(config: ServeConfig, notices: Notices): Promise<LoadedPolicy> {
  const policyPath = config.policyPath ?? DEFAULT_POLICY_PATH;
  if (config.policyPath === null) notices.notice(`no --policy given: using the default policy ${policyPath}`);
  const policy = await loadPolicyFile(policyPath);
  if (config.shell !== null) await assertBashCompatibleShell(config.shell);
  return policy;
}

/**
 * Commands are judged in a worker thread, sent the exact policy text
 * loaded and hashed here: the bash parser is never initialised and never
 * parses in the main thread (its grammar wasm and heap live in the worker).
 * The rules' examples and the embedded tests run once per policy text and
 * termgate version: with the sandbox on, a passing run is remembered in the
 * audit trail's directory, which no command can reach (`PolicyCheckCache`).
 */
async function startJudge(
  policy: LoadedPolicy,
  config: ServeConfig,
  { judgeWorkerPath }: CompositionOptions,
): Promise<WorkerThreadCommandJudge> {
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
}

function openAuditSink(config: ServeConfig, notices: Notices): ChainedAuditSink {
  // Read the key before the trail opens: a bad key refuses the start, and nothing later reads the file.
  const keyPath = config.auditSigningKeyPath ?? null;
  const signingKey = keyPath === null ? null : loadSigningKey(keyPath);
  const trail = FileAuditSink.open(auditPathOf(config), {
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
}

function startServeSandbox(
  policy: LoadedPolicy,
  config: ServeConfig,
  { judgeWorkerPath }: CompositionOptions,
  sink: ChainedAuditSink,
): Promise<SandboxRuntime | null> {
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
    sink,
  );
}

/** The start-up check cache in the trail's directory (canonical, when it exists). */
function policyCheckCache(auditPath: string): PolicyCheckCache {
  const dir = dirname(auditPath);
  return PolicyCheckCache.in(existsSync(dir) ? realpathSync(dir) : dir, TERMGATE_VERSION);
}
