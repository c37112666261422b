import type { AuditSink, ChainHead } from '@termgate/audit';
import type { PinoAuditSink as PinoAuditSinkType } from '@termgate/audit/adapters';
import type { LoadedPolicy, PolicyGate } from '@termgate/policy';
import { TERMGATE_VERSION } from '../version.js';
import { defaultAuditPath } from './default-audit-path.js';
import { type SandboxRuntime, startSandbox } from './sandbox-runtime.js';
import type { ServeConfig } from './serve-config.js';

/** What the policy side of `serve` is made of once it started. */
export interface PolicyRuntime {
  readonly policy: LoadedPolicy;
  readonly gate: PolicyGate;
  readonly sink: AuditSink;
  readonly auditPath: string;
  /** The started sandbox, or `null` when the policy's sandbox mode is `off`. */
  readonly sandbox: SandboxRuntime | null;
  /**
   * The checkpoint signing key's file (absolute), or null. It was read at
   * start; a sandbox must hide this path (and should hide the trail) from
   * the commands it runs.
   */
  readonly auditSigningKeyPath: string | null;
  /**
   * Appends `server-stop`, closes the trail and ends the judge's worker
   * process. Returns the trail's head after the stop record (null when it
   * could not be written), for the caller to log as an external anchor. Call
   * after every terminal ended. Idempotent.
   */
  readonly stop: (reason: string) => ChainHead | null;
}

/** Seams for tests. */
export interface PolicyRuntimeOptions {
  /**
   * The judge worker script; default the one built next to `@termgate/policy`.
   * Tests that run the TypeScript sources point it at the built file.
   */
  readonly judgeWorkerPath?: string;
}

/**
 * Loads and checks everything the gate needs, in an order that fails closed:
 * the policy must parse, validate and pass its own embedded tests; `--shell`
 * must be bash; the audit file must open and take the `server-start` record.
 * Any failure throws, and `serve` refuses to start.
 *
 * Commands are judged in a worker process (`ChildProcessCommandJudge`), sent
 * the exact policy text loaded and hashed here: the bash parser never loads
 * in this process, which keeps it small and every command's `fork()` cheap.
 */
export async function startPolicyRuntime(
  config: ServeConfig,
  notice: (line: string) => void,
  options: PolicyRuntimeOptions = {},
): Promise<PolicyRuntime> {
  // Loaded here, not at the top: the parser, YAML and schema code load while
  // the protocol already answers (see serve.ts), and the bundle keeps it lazy.
  const {
    assertBashCompatibleShell,
    ChildProcessCommandJudge,
    DEFAULT_POLICY_PATH,
    INSTALL_ROOT,
    loadPolicyFile,
    PolicyGate,
    recordServerStart,
    recordServerStop,
  } = await import('@termgate/policy');
  const { loadSigningKey } = await import('@termgate/audit');
  const { CheckpointingAuditSink, PinoAuditSink } = await import('@termgate/audit/adapters');
  const policyPath = config.policyPath ?? DEFAULT_POLICY_PATH;
  if (config.policyPath === null)
    notice(`termgate: no --policy given: using the default policy ${policyPath}`);
  const policy = await loadPolicyFile(policyPath);
  if (config.shell !== null) await assertBashCompatibleShell(config.shell);
  const judge = await ChildProcessCommandJudge.start({
    policyPath: policy.path,
    policyText: policy.text,
    requirePassingTests: true,
    ...(options.judgeWorkerPath !== undefined && { workerPath: options.judgeWorkerPath }),
  });
  const auditPath = config.auditPath ?? defaultAuditPath();
  const auditSigningKeyPath = config.auditSigningKeyPath ?? null;
  let sink: PinoAuditSinkType | InstanceType<typeof CheckpointingAuditSink> | undefined;
  let sandbox: SandboxRuntime | null = null;
  try {
    // The worker confirmed it parsed the text it was sent; that text must be the file that was hashed.
    if (judge.sha256 !== policy.sha256) {
      throw new Error(
        `the policy judge parsed sha256 ${judge.sha256}, not the file's ${policy.sha256} (is ${policy.path} valid UTF-8?)`,
      );
    }
    // Read the key before the trail opens: a bad key refuses the start, and nothing later reads the file.
    const signingKey = auditSigningKeyPath === null ? null : loadSigningKey(auditSigningKeyPath);
    const trail = PinoAuditSink.open(auditPath, {
      mkdir: true,
      fsync: config.auditFsync,
      service: { name: 'termgate', version: TERMGATE_VERSION },
      ...(config.auditRotation === undefined ? {} : { rotation: config.auditRotation }),
    });
    sink =
      signingKey === null
        ? trail
        : new CheckpointingAuditSink(trail, {
            privateKey: signingKey,
            ...config.auditCheckpoint,
            onError: (error) => notice(`termgate: audit checkpoint failed: ${(error as Error).message}`),
          });
    sandbox = await startSandbox(
      policy,
      { policyPath: policy.path, auditPath, installRoot: INSTALL_ROOT, signingKeyPath: auditSigningKeyPath },
      sink,
    );
    const network = policy.sandbox.network;
    recordServerStart(sink, {
      policy: { path: policy.path, sha256: policy.sha256 },
      version: TERMGATE_VERSION,
      sandbox: { mode: policy.sandbox.mode, network: typeof network === 'string' ? network : network.allow },
    });
  } catch (error) {
    sandbox?.close();
    sink?.close();
    await judge.close();
    throw error;
  }
  notice(`termgate: policy ${policy.path} (sha256 ${policy.sha256.slice(0, 12)}…); audit trail ${auditPath}`);
  notice(
    sandbox === null
      ? 'termgate: sandbox off: commands run unconfined (the policy still judges every line)'
      : `termgate: sandbox on (bubblewrap): writable ${policy.sandbox.writable.join(', ') || '(none)'}; network ${describeNetwork(policy.sandbox.network)}`,
  );
  notice(`termgate: audit head at start: ${anchorOf(sink.head)} (keep it: termgate audit verify --anchor)`);
  let stopped = false;
  let finalHead: ChainHead | null = null;
  const opened = sink;
  return {
    policy,
    gate: new PolicyGate(
      judge,
      opened,
      { path: policy.path, sha256: policy.sha256 },
      sandbox === null ? {} : { sandbox: sandbox.profiler },
    ),
    sink: opened,
    auditPath,
    sandbox,
    auditSigningKeyPath,
    stop: (reason) => {
      if (stopped) return finalHead;
      stopped = true;
      let stopRecorded = false;
      try {
        recordServerStop(opened, { reason });
        stopRecorded = true;
      } finally {
        try {
          // With a signing key, close writes the final checkpoint after the stop record.
          opened.close();
        } catch (error) {
          notice(`termgate: the audit trail's final checkpoint was not written: ${(error as Error).message}`);
        } finally {
          sandbox?.close();
          void judge.close();
        }
      }
      // The head after the final checkpoint, when there is one.
      if (stopRecorded) finalHead = opened.head;
      return finalHead;
    },
  };
}

/** `SEQ:HASH`, the form `termgate audit verify --anchor` takes. */
export function anchorOf(head: ChainHead | null): string {
  return head === null ? '(empty)' : `${head.seq}:${head.hash}`;
}

function describeNetwork(network: LoadedPolicy['sandbox']['network']): string {
  return typeof network === 'string' ? network : `allowlist (${network.allow.join(', ')})`;
}
