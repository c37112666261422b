import { McpServer, outputBudgetFor, type SchemaValidator } from '@termgate/core';
import { AjvSchemaValidator } from '@termgate/core/adapters';
import { TERMINAL_HOST, type TerminalHost } from '@termgate/termhost';
import { DeferredTerminalHost } from '@termgate/termhost/adapters';
import { Container } from 'inversify';
import type { Logger } from 'pino';
import { TERMGATE_VERSION } from '../version.js';
import { createGatedTerminalHost } from './gated-terminal-host.js';
import { anchorOf, type PolicyRuntime } from './policy-runtime.js';
import { ServeApplication } from './serve-application.js';
import {
  ROOT_LOGGER,
  SCHEMA_VALIDATOR,
  SERVE_CONFIG,
  type ServeConfig,
  SHUTDOWN_HOOKS,
  type ShutdownHook,
} from './serve-config.js';

/**
 * The composition root: the only place that names concrete classes. Every
 * binding is a singleton for the life of one `serve` process.
 */
export function buildServeContainer(
  config: ServeConfig,
  logger: Logger,
  runtime: Promise<PolicyRuntime>,
): Container {
  const container = new Container({ defaultScope: 'Singleton' });
  container.bind<ServeConfig>(SERVE_CONFIG).toConstantValue(config);
  container.bind<Logger>(ROOT_LOGGER).toConstantValue(logger);
  // The protocol answers at once; terminal verbs wait until the policy gate
  // is ready, and fail (nothing runs) if it never is.
  container
    .bind<TerminalHost>(TERMINAL_HOST)
    .toConstantValue(
      new DeferredTerminalHost(
        runtime.then((ready) => createGatedTerminalHost(config, ready, logger, { reclaimExited: true })),
      ),
    );
  container.bind<ShutdownHook[]>(SHUTDOWN_HOOKS).toConstantValue([
    async (reason) => {
      const ready = await runtime.catch(() => null);
      const head = ready?.stop(reason);
      // An external witness of the trail's end: with it, `audit verify --anchor` catches a later rewrite.
      if (head) logger.info({ auditHead: anchorOf(head), auditPath: ready?.auditPath }, 'audit trail closed');
    },
  ]);
  container.bind<SchemaValidator>(SCHEMA_VALIDATOR).toDynamicValue(() => new AjvSchemaValidator());
  container.bind(McpServer).toDynamicValue(
    (context) =>
      new McpServer(
        context.get<TerminalHost>(TERMINAL_HOST),
        context.get<SchemaValidator>(SCHEMA_VALIDATOR),
        {
          serverInfo: { name: 'termgate', version: TERMGATE_VERSION },
          outputBudget: runtime.then((ready) => outputBudgetFor(ready.policy.limits.maxOutputChars)),
          logger: logger.child({ component: 'mcp' }),
        },
      ),
  );
  container.bind(ServeApplication).toSelf();
  return container;
}
