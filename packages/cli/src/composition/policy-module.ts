import { AUDIT_SINK } from '@termgate/audit';
import { COMMAND_JUDGE, type LoadedPolicy, PolicyGate, type PolicyGateOptions } from '@termgate/policy';
import {
  GATE,
  PROCESS_SPAWNER,
  type ProcessSpawner,
  ProcessTerminalHost,
  TERMINAL_OBSERVER,
  type TerminalObserver,
} from '@termgate/termhost';
import { commandSpawner } from '@termgate/termhost/sandbox';
import { ContainerModule, decorate, inject, injectable } from 'inversify';
import type { Logger } from 'pino';
import type { SandboxRuntime } from '../serve/sandbox-runtime.js';
import type { ServeConfig } from '../serve/serve-config.js';
import type { CompositionOptions } from './composition-options.js';
import { type PolicyParts, startPolicyParts } from './policy-parts.js';
import type { PolicyRuntime } from './policy-runtime.js';
import { startPolicyRuntime } from './started-policy-runtime.js';
import {
  COMPOSITION_OPTIONS,
  LOADED_POLICY,
  NOTICES,
  POLICY_GATE_OPTIONS,
  POLICY_INFO,
  POLICY_PARTS,
  POLICY_RUNTIME_STARTED,
  ROOT_LOGGER,
  SANDBOX_RUNTIME,
  SERVE_CONFIG,
} from './tokens.js';

// @termgate/policy does not import inversify: the gate's injections are declared here.
decorate(injectable(), PolicyGate);
decorate(inject(COMMAND_JUDGE), PolicyGate, 0);
decorate(inject(AUDIT_SINK), PolicyGate, 1);
decorate(inject(POLICY_INFO), PolicyGate, 2);
decorate(inject(POLICY_GATE_OPTIONS), PolicyGate, 3);

/**
 * The policy side of the graph: the loaded policy, the command judge (a
 * worker thread), the audit sink, the sandbox, the gate (also the
 * terminals' observer), the started runtime that ties them together, and
 * the gated host with its spawner. This module imports @termgate/policy
 * (the parser, YAML, the schema), so the composition root loads it only
 * once the protocol already answers.
 *
 * Every binding is a singleton. The parts start together in their
 * fail-closed order (policy-parts.ts), the gate is built from them, and the
 * runtime records `server-start` (started-policy-runtime.ts); the spawner
 * and the host are built only from the started runtime. A failure throws
 * after closing whatever had started, and nothing runs.
 */
export const policyModule = new ContainerModule(({ bind }) => {
  bind<PolicyParts>(POLICY_PARTS).toResolvedValue(startPolicyParts, [
    SERVE_CONFIG,
    NOTICES,
    COMPOSITION_OPTIONS,
  ]);
  bind<LoadedPolicy>(LOADED_POLICY).toResolvedValue((parts: PolicyParts) => parts.policy, [POLICY_PARTS]);
  bind(COMMAND_JUDGE).toResolvedValue((parts: PolicyParts) => parts.judge, [POLICY_PARTS]);
  bind(AUDIT_SINK).toResolvedValue((parts: PolicyParts) => parts.sink, [POLICY_PARTS]);
  bind<SandboxRuntime | null>(SANDBOX_RUNTIME).toResolvedValue(
    (parts: PolicyParts) => parts.sandbox,
    [POLICY_PARTS],
  );
  bind(POLICY_INFO).toResolvedValue(
    ({ policy: { path, sha256 }, managed }: PolicyParts) => ({
      path,
      sha256,
      ...(managed !== null && { managed: { path: managed.path, sha256: managed.sha256 } }),
    }),
    [POLICY_PARTS],
  );
  bind<PolicyGateOptions>(POLICY_GATE_OPTIONS).toResolvedValue(
    (sandbox: SandboxRuntime | null) => (sandbox === null ? {} : { sandbox: sandbox.profiler }),
    [SANDBOX_RUNTIME],
  );
  bind(GATE).to(PolicyGate);
  // The gate records spawns and exits (with output digests) as the terminals' observer.
  bind(TERMINAL_OBSERVER).toService(GATE);
  bind<PolicyRuntime>(POLICY_RUNTIME_STARTED).toResolvedValue(startPolicyRuntime, [
    POLICY_PARTS,
    GATE,
    SERVE_CONFIG,
    NOTICES,
  ]);

  bind(PROCESS_SPAWNER).toResolvedValue(
    (runtime: PolicyRuntime, logger: Logger) =>
      commandSpawner(runtime.sandbox, logger.child({ component: 'termhost' })),
    [POLICY_RUNTIME_STARTED, ROOT_LOGGER],
  );
  bind(ProcessTerminalHost).toResolvedValue(gatedTerminalHost, [
    POLICY_RUNTIME_STARTED,
    TERMINAL_OBSERVER,
    PROCESS_SPAWNER,
    SERVE_CONFIG,
    COMPOSITION_OPTIONS,
    ROOT_LOGGER,
  ]);
});

/**
 * The host of every terminal: the started runtime's gate decides every
 * verb; the policy's limits and inherited environment apply; command lines
 * run in bash (or the checked --shell) without startup files.
 */
function gatedTerminalHost(
  runtime: PolicyRuntime,
  observer: TerminalObserver,
  spawner: ProcessSpawner,
  config: ServeConfig,
  options: CompositionOptions,
  logger: Logger,
): ProcessTerminalHost {
  const limits = runtime.policy.limits;
  const termhostLogger = logger.child({ component: 'termhost' });
  return new ProcessTerminalHost({
    cwd: config.cwd,
    gate: runtime.gate,
    observer,
    spawner,
    digestOutput: true,
    reclaimExited: options.reclaimExited,
    inheritEnv: runtime.policy.inheritedEnv(process.env),
    ...(limits.maxTerminals !== undefined && { maxTerminals: limits.maxTerminals }),
    ...(limits.maxOutputBytes !== undefined && { maxOutputBytes: limits.maxOutputBytes }),
    ...(limits.timeoutSeconds !== undefined && { timeoutMs: limits.timeoutSeconds * 1000 }),
    ...(config.shell !== null && { shellPrefix: [config.shell, '--noprofile', '--norc', '-c'] }),
    onError: (error, where) => termhostLogger.warn({ err: error, where }, 'termhost error'),
  });
}
