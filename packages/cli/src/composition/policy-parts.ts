import { existsSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { loadSigningKey } from '@termgate/audit';
import { CheckpointingAuditSink, FileAuditSink } from '@termgate/audit/adapters';
import {
  assertBashCompatibleShell,
  DEFAULT_POLICY_PATH,
  INSTALL_ROOT,
  type LoadedPolicy,
  layerPolicies,
  loadPolicyFile,
  managedPolicyPath,
} from '@termgate/policy';
import { WorkerThreadCommandJudge } from '@termgate/policy/adapters';
import type { Notices } from '../logging.js';
import { defaultAuditPath } from '../serve/default-audit-path.js';
import { PolicyCheckCache, policyChecksText } from '../serve/policy-check-cache.js';
import { type SandboxRuntime, startSandbox } from '../serve/sandbox-runtime.js';
import type { ServeConfig } from '../serve/serve-config.js';
import { TERMGATE_VERSION } from '../version.js';
import type { CompositionOptions } from './composition-options.js';
import type { ChainedAuditSink } from './policy-runtime.js';

/** The policy side's parts, started (POLICY_PARTS); the gate and the runtime are built from them. */
export interface PolicyParts {
  /** The policy the server enforces: the workspace's, or under a managed layer the merged one (`PolicyLayers.effective`). */
  readonly policy: LoadedPolicy;
  /** The managed layer, when one is in force. */
  readonly managed: LoadedPolicy | null;
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
  const { workspace, managed } = await loadServePolicy(config, notices);
  // Under a managed layer the sandbox, limits and inherited environment are the merged ones.
  const policy = managed === null ? workspace : layerPolicies(managed, workspace).effective;
  const parts: { sink?: ChainedAuditSink; sandbox?: SandboxRuntime | null } = {};
  const [judged, stood] = await Promise.allSettled([
    startJudge(workspace, managed, config, options).then((judge) => {
      for (const l of judge.loosenings) {
        notices.warning(
          `the workspace policy ${workspace.path} asks for more than the managed policy: ${l.key}: ${l.message}`,
        );
      }
      return judge;
    }),
    (async () => {
      parts.sink = openAuditSink(config, notices);
      parts.sandbox = await startServeSandbox(policy, managed, config, options, parts.sink);
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
    managed,
    judge: judged.value,
    sink: parts.sink as ChainedAuditSink,
    sandbox: parts.sandbox ?? null,
  };
}

/** The audit trail's file: `--audit`, else the default. */
export function auditPathOf(config: ServeConfig): string {
  return config.auditPath ?? defaultAuditPath();
}

/**
 * The workspace policy and the managed layer in force (none when no file is):
 * a managed file that cannot be read or is invalid refuses the start.
 */
async function loadServePolicy(
  config: ServeConfig,
  notices: Notices,
): Promise<{ workspace: LoadedPolicy; managed: LoadedPolicy | null }> {
  const policyPath = config.policyPath ?? DEFAULT_POLICY_PATH;
  if (config.policyPath === null) notices.notice(`no --policy given: using the default policy ${policyPath}`);
  const managedPath = managedPolicyPath(config.managedPolicyPath ?? null);
  const [workspace, managed] = await Promise.all([
    loadPolicyFile(policyPath),
    managedPath === null ? null : loadPolicyFile(managedPath),
  ]);
  if (config.shell !== null) await assertBashCompatibleShell(config.shell);
  return { workspace, managed };
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
  managed: LoadedPolicy | null,
  config: ServeConfig,
  { judgeWorkerPath }: CompositionOptions,
): Promise<WorkerThreadCommandJudge> {
  const sandboxed = policy.sandbox.mode === 'required' || managed?.sandbox.mode === 'required';
  const cache = sandboxed ? policyCheckCache(auditPathOf(config)) : null;
  // The cache's key covers every layer: a managed test passed with one workspace policy, not another.
  const checkedText = policyChecksText(policy, managed);
  const checked = cache?.passed(checkedText) ?? false;
  const judge = await WorkerThreadCommandJudge.start({
    policyPath: policy.path,
    policyText: policy.text,
    ...(managed !== null && { managed: { path: managed.path, text: managed.text } }),
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
  if (managed !== null && judge.managedSha256 !== managed.sha256) {
    await judge.close();
    throw new Error(
      `the policy judge parsed managed sha256 ${judge.managedSha256}, not the file's ${managed.sha256} (is ${managed.path} valid UTF-8?)`,
    );
  }
  // Only now: the start resolved, so the examples and the tests passed.
  if (!checked) cache?.record(checkedText);
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
  managed: LoadedPolicy | null,
  config: ServeConfig,
  { judgeWorkerPath }: CompositionOptions,
  sink: ChainedAuditSink,
): Promise<SandboxRuntime | null> {
  return startSandbox(
    policy,
    {
      policyPath: policy.path,
      managedPolicyPath: managed?.path ?? null,
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
