import { AjvSchemaValidator, McpServer, type SchemaValidator } from '@termgate/core';
import {
  AllowAllGate,
  GATE,
  type Gate,
  ProcessTerminalHost,
  TERMINAL_HOST,
  type TerminalHost,
} from '@termgate/termhost';
import { Container } from 'inversify';
import type { Logger } from 'pino';
import { TERMGATE_VERSION } from '../version.js';
import { ServeApplication } from './serve-application.js';
import { ROOT_LOGGER, SCHEMA_VALIDATOR, SERVE_CONFIG, type ServeConfig } from './serve-config.js';

/**
 * The composition root: the only place that names concrete classes. Every
 * binding is a singleton for the life of one `serve` process.
 */
export function buildServeContainer(config: ServeConfig, logger: Logger): Container {
  const container = new Container({ defaultScope: 'Singleton' });
  container.bind<ServeConfig>(SERVE_CONFIG).toConstantValue(config);
  container.bind<Logger>(ROOT_LOGGER).toConstantValue(logger);
  // Until the policy gate is wired, every verb is allowed; `serve` says so on stderr.
  container.bind<Gate>(GATE).toConstantValue(new AllowAllGate());
  container.bind<SchemaValidator>(SCHEMA_VALIDATOR).toDynamicValue(() => new AjvSchemaValidator());
  container.bind<TerminalHost>(TERMINAL_HOST).toDynamicValue(
    (context) =>
      new ProcessTerminalHost({
        cwd: config.cwd,
        gate: context.get<Gate>(GATE),
        ...(config.shell !== null && { shellPrefix: [config.shell, '--noprofile', '--norc', '-c'] }),
        onError: (error, where) =>
          logger.child({ component: 'termhost' }).warn({ err: error, where }, 'termhost error'),
      }),
  );
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
