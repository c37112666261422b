import { AjvSchemaValidator, McpServer, type SchemaValidator } from '@termgate/core';
import {
  GATE,
  type Gate,
  TERMINAL_HOST,
  TERMINAL_OBSERVER,
  type TerminalHost,
  type TerminalObserver,
} from '@termgate/termhost';
import { Container } from 'inversify';
import type { Logger } from 'pino';
import { TERMGATE_VERSION } from '../version.js';
import { createGatedTerminalHost } from './gated-terminal-host.js';
import type { PolicyRuntime } from './policy-runtime.js';
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
export function buildServeContainer(config: ServeConfig, logger: Logger, runtime: PolicyRuntime): Container {
  const container = new Container({ defaultScope: 'Singleton' });
  container.bind<ServeConfig>(SERVE_CONFIG).toConstantValue(config);
  container.bind<Logger>(ROOT_LOGGER).toConstantValue(logger);
  // The policy gate decides every verb and, as the observer, records spawns and exits.
  container.bind<Gate>(GATE).toConstantValue(runtime.gate);
  container.bind<TerminalObserver>(TERMINAL_OBSERVER).toConstantValue(runtime.gate);
  container.bind<ShutdownHook[]>(SHUTDOWN_HOOKS).toConstantValue([runtime.stop]);
  container.bind<SchemaValidator>(SCHEMA_VALIDATOR).toDynamicValue(() => new AjvSchemaValidator());
  container
    .bind<TerminalHost>(TERMINAL_HOST)
    .toDynamicValue(() => createGatedTerminalHost(config, runtime, logger));
  container.bind(McpServer).toDynamicValue(
    (context) =>
      new McpServer(
        context.get<TerminalHost>(TERMINAL_HOST),
        context.get<SchemaValidator>(SCHEMA_VALIDATOR),
        {
          serverInfo: { name: 'termgate', version: TERMGATE_VERSION },
          logger: logger.child({ component: 'mcp' }),
        },
      ),
  );
  container.bind(ServeApplication).toSelf();
  return container;
}
