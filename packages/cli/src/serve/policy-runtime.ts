import type { AuditSink, LoadedPolicy, PolicyGate } from '@termgate/policy';
import { TERMGATE_VERSION } from '../version.js';
import { defaultAuditPath } from './default-audit-path.js';
import type { ServeConfig } from './serve-config.js';

/** What the policy side of `serve` is made of once it started. */
export interface PolicyRuntime {
  readonly policy: LoadedPolicy;
  readonly gate: PolicyGate;
  readonly sink: AuditSink;
  readonly auditPath: string;
  /** Appends `server-stop` and closes the trail. Call after every terminal ended. Idempotent. */
  readonly stop: (reason: string) => void;
}

/**
 * Loads and checks everything the gate needs, in an order that fails closed:
 * the policy must parse, validate and pass its own embedded tests; `--shell`
 * must be bash; the audit file must open and take the `server-start` record.
 * Any failure throws, and `serve` refuses to start.
 */
export async function startPolicyRuntime(
  config: ServeConfig,
  notice: (line: string) => void,
): Promise<PolicyRuntime> {
  // Loaded here, not at the top: the parser, YAML and schema code load while
  // the protocol already answers (see serve.ts), and the bundle keeps it lazy.
  const {
    assertBashCompatibleShell,
    createPolicyEngine,
    DEFAULT_POLICY_PATH,
    loadPolicyFile,
    PinoAuditSink,
    PolicyGate,
    recordServerStart,
    recordServerStop,
  } = await import('@termgate/policy');
  const policyPath = config.policyPath ?? DEFAULT_POLICY_PATH;
  if (config.policyPath === null)
    notice(`termgate: no --policy given: using the default policy ${policyPath}`);
  const policy = await loadPolicyFile(policyPath);
  if (config.shell !== null) await assertBashCompatibleShell(config.shell);
  const engine = await createPolicyEngine(policy, { requirePassingTests: true });
  const auditPath = config.auditPath ?? defaultAuditPath();
  const sink = PinoAuditSink.open(auditPath, {
    mkdir: true,
    fsync: config.auditFsync,
    service: { name: 'termgate', version: TERMGATE_VERSION },
  });
  recordServerStart(sink, {
    policy: { path: policy.path, sha256: policy.sha256 },
    version: TERMGATE_VERSION,
  });
  notice(`termgate: policy ${policy.path} (sha256 ${policy.sha256.slice(0, 12)}…); audit trail ${auditPath}`);
  let stopped = false;
  return {
    policy,
    gate: new PolicyGate(engine, sink, { path: policy.path, sha256: policy.sha256 }),
    sink,
    auditPath,
    stop: (reason) => {
      if (stopped) return;
      stopped = true;
      try {
        recordServerStop(sink, { reason });
      } finally {
        sink.close();
      }
    },
  };
}
