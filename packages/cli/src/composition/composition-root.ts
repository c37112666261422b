import 'reflect-metadata/lite';
import { AcpProxy, McpServer, outputBudgetFor, type SchemaValidator } from '@termgate/core';
import { AjvSchemaValidator } from '@termgate/core/adapters';
import {
  GATE,
  type Gate,
  PROCESS_SPAWNER,
  type ProcessSpawner,
  ProcessTerminalHost,
  TERMINAL_HOST,
  TERMINAL_OBSERVER,
  type TerminalHost,
  type TerminalObserver,
} from '@termgate/termhost';
import { DeferredTerminalHost } from '@termgate/termhost/adapters';
import { StdioTransport } from '@termgate/transport-stdio';
import { Container } from 'inversify';
import type { Logger } from 'pino';
import type { Notices } from '../logging.js';
import { ServeApplication } from '../serve/serve-application.js';
import type { ServeConfig } from '../serve/serve-config.js';
import { TERMGATE_VERSION } from '../version.js';
import { commandSpawner } from './command-spawner.js';
import type { CompositionOptions } from './composition-options.js';
import { anchorOf, type PolicyRuntime } from './policy-runtime.js';
import {
  COMPOSITION_OPTIONS,
  NOTICES,
  OPEN_STDIO_TRANSPORT,
  type OpenStdioTransport,
  POLICY_RUNTIME,
  POLICY_RUNTIME_STARTED,
  ROOT_LOGGER,
  SCHEMA_VALIDATOR,
  SERVE_CONFIG,
  SHUTDOWN_HOOKS,
  type ShutdownHook,
} from './tokens.js';

/**
 * The composition root of `serve` and `acp-proxy`: with policy-module.ts,
 * the only place that names concrete classes and builds them (adapters
 * build their own parts). Every binding is a singleton for the life of the
 * process.
 *
 * Start-up is asynchronous and fails closed. Resolving POLICY_RUNTIME (with
 * `getAsync`) loads policy-module.ts, which imports @termgate/policy, and
 * starts the policy side in order (see there); `serve` resolves
 * ServeApplication at once, so the protocol answers while that runs, and
 * its TERMINAL_HOST waits for the gate (nothing runs before it; if it
 * never starts, every verb fails). `acp-proxy` awaits POLICY_RUNTIME before
 * it starts the agent.
 *
 * `reflect-metadata/lite` (the Reflect metadata API without its internal
 * polyfills; what inversify itself loads) is imported first:
 * ServeApplication's `@injectable`/`@inject` decorators record their
 * metadata through it. It is a dependency of the cli for that, and
 * inversify's peer dependency.
 */
export function buildContainer(
  config: ServeConfig,
  logger: Logger,
  notices: Notices,
  options: CompositionOptions,
): Container {
  const container = new Container({ defaultScope: 'Singleton' });
  container.bind<ServeConfig>(SERVE_CONFIG).toConstantValue(config);
  container.bind<Logger>(ROOT_LOGGER).toConstantValue(logger);
  container.bind<Notices>(NOTICES).toConstantValue(notices);
  container.bind<CompositionOptions>(COMPOSITION_OPTIONS).toConstantValue(options);

  container.bind<PolicyRuntime>(POLICY_RUNTIME).toDynamicValue(async () => {
    const { policyModule } = await import('./policy-module.js');
    await container.loadAsync(policyModule);
    return container.getAsync<PolicyRuntime>(POLICY_RUNTIME_STARTED);
  });

  container.bind<ProcessSpawner>(PROCESS_SPAWNER).toDynamicValue(async () => {
    const runtime = await container.getAsync<PolicyRuntime>(POLICY_RUNTIME);
    return commandSpawner(runtime.sandbox, logger.child({ component: 'termhost' }));
  });
  // The gate decides every verb; the policy's limits and inherited
  // environment apply; command lines run in bash (or the checked --shell)
  // without startup files.
  container.bind(ProcessTerminalHost).toDynamicValue(async () => {
    const runtime = await container.getAsync<PolicyRuntime>(POLICY_RUNTIME);
    const limits = runtime.policy.limits;
    const termhostLogger = logger.child({ component: 'termhost' });
    return new ProcessTerminalHost({
      cwd: config.cwd,
      gate: await container.getAsync<Gate>(GATE),
      observer: await container.getAsync<TerminalObserver>(TERMINAL_OBSERVER),
      spawner: await container.getAsync<ProcessSpawner>(PROCESS_SPAWNER),
      digestOutput: true,
      reclaimExited: options.reclaimExited,
      inheritEnv: runtime.policy.inheritedEnv(process.env),
      ...(limits.maxTerminals !== undefined && { maxTerminals: limits.maxTerminals }),
      ...(limits.maxOutputBytes !== undefined && { maxOutputBytes: limits.maxOutputBytes }),
      ...(limits.timeoutSeconds !== undefined && { timeoutMs: limits.timeoutSeconds * 1000 }),
      ...(config.shell !== null && { shellPrefix: [config.shell, '--noprofile', '--norc', '-c'] }),
      onError: (error, where) => termhostLogger.warn({ err: error, where }, 'termhost error'),
    });
  });
  // Available at once; every verb waits for the gated host, and fails if it never starts.
  container
    .bind<TerminalHost>(TERMINAL_HOST)
    .toDynamicValue(() => new DeferredTerminalHost(container.getAsync(ProcessTerminalHost)));

  container.bind<ShutdownHook[]>(SHUTDOWN_HOOKS).toDynamicValue(() => [
    async (reason) => {
      const runtime = await container.getAsync<PolicyRuntime>(POLICY_RUNTIME).catch(() => null);
      const head = runtime?.stop(reason);
      // An external witness of the trail's end: with it, `audit verify --anchor` catches a later rewrite.
      if (head) {
        notices.anchor(
          `audit trail closed; head at stop: ${anchorOf(head)} (keep it: termgate audit verify --anchor)`,
          {
            auditHead: anchorOf(head),
            auditPath: runtime?.auditPath,
          },
        );
      }
    },
  ]);

  container
    .bind<OpenStdioTransport>(OPEN_STDIO_TRANSPORT)
    .toConstantValue(
      (input, output, transportOptions) => new StdioTransport(input, output, transportOptions),
    );
  container.bind<SchemaValidator>(SCHEMA_VALIDATOR).toDynamicValue(() => new AjvSchemaValidator());
  container.bind(McpServer).toDynamicValue(
    (context) =>
      new McpServer(
        context.get<TerminalHost>(TERMINAL_HOST),
        context.get<SchemaValidator>(SCHEMA_VALIDATOR),
        {
          serverInfo: { name: 'termgate', version: TERMGATE_VERSION },
          outputBudget: container
            .getAsync<PolicyRuntime>(POLICY_RUNTIME)
            .then((runtime) => outputBudgetFor(runtime.policy.limits.maxOutputChars)),
          // The instructions and terminal_create's description say what the sandbox means, when it is on.
          sandbox: () =>
            container.getAsync<PolicyRuntime>(POLICY_RUNTIME).then(({ policy: { sandbox } }) =>
              sandbox.mode === 'required'
                ? {
                    protectGit: sandbox.protectGit,
                    privateTmp: sandbox.privateTmp,
                    network: typeof sandbox.network === 'string' ? sandbox.network : 'allowlist',
                  }
                : null,
            ),
          logger: logger.child({ component: 'mcp' }),
          ...(config.approvalTimeoutMs !== undefined && { approvalTimeoutMs: config.approvalTimeoutMs }),
          ...(config.approvalStateTtlMs !== undefined && {
            requestState: { ttlMs: config.approvalStateTtlMs },
          }),
        },
      ),
  );
  container.bind(ServeApplication).toSelf();
  container.bind(AcpProxy).toDynamicValue(
    (context) =>
      new AcpProxy(context.get<TerminalHost>(TERMINAL_HOST), context.get<SchemaValidator>(SCHEMA_VALIDATOR), {
        logger: logger.child({ component: 'acp-proxy' }),
        ...(config.approvalTimeoutMs !== undefined && { approvalTimeoutMs: config.approvalTimeoutMs }),
      }),
  );
  return container;
}
