import { AcpProxy, McpServer, type SchemaValidator } from '@termgate/core';
import { AjvSchemaValidator } from '@termgate/core/adapters';
import { ProcessTerminalHost, TERMINAL_HOST, type TerminalHost } from '@termgate/termhost';
import { DeferredTerminalHost } from '@termgate/termhost/adapters';
import { HTTP_GET_ROUTES, REQUEST_AUTHORIZER } from '@termgate/transport-http';
import { StdioTransport } from '@termgate/transport-stdio';
import { Container, decorate, inject, injectable } from 'inversify';
import type { Logger } from 'pino';
import { AcpProxyApplication } from '../acp-proxy/acp-proxy-application.js';
import type { Notices } from '../logging.js';
import { ServeApplication } from '../serve/serve-application.js';
import type { ServeConfig } from '../serve/serve-config.js';
import type { CompositionOptions } from './composition-options.js';
import { openHttpTransport } from './http-transport.js';
import { anchorOf, type PolicyRuntime } from './policy-runtime.js';
import type { PolicyStartup } from './policy-startup.js';
import { acpProxyOptions, mcpServerOptions } from './protocol-options.js';
import {
  ACP_PROXY_OPTIONS,
  COMPOSITION_OPTIONS,
  MCP_SERVER_OPTIONS,
  NOTICES,
  OPEN_HTTP_TRANSPORT,
  OPEN_STDIO_TRANSPORT,
  type OpenHttpTransport,
  type OpenStdioTransport,
  POLICY_RUNTIME,
  POLICY_RUNTIME_STARTED,
  POLICY_STARTUP,
  ROOT_LOGGER,
  SCHEMA_VALIDATOR,
  SERVE_CONFIG,
  SHUTDOWN_HOOKS,
  type ShutdownHook,
} from './tokens.js';

// @termgate/core does not import inversify: the injections of its classes are declared here.
decorate(injectable(), AjvSchemaValidator);
decorate(injectable(), McpServer);
decorate(inject(TERMINAL_HOST), McpServer, 0);
decorate(inject(SCHEMA_VALIDATOR), McpServer, 1);
decorate(inject(MCP_SERVER_OPTIONS), McpServer, 2);
decorate(injectable(), AcpProxy);
decorate(inject(TERMINAL_HOST), AcpProxy, 0);
decorate(inject(SCHEMA_VALIDATOR), AcpProxy, 1);
decorate(inject(ACP_PROXY_OPTIONS), AcpProxy, 2);

/**
 * The composition root of `serve` and `acp-proxy`: with policy-module.ts,
 * the only place that names concrete classes and binds them to their
 * tokens. The container builds them: classes declare what they are given
 * (`@inject` in the cli's own classes; `decorate` above and in
 * policy-module.ts for the other packages' classes, which do not import
 * inversify), the root binds configuration as constants and values made
 * from other bindings with `toResolvedValue` and their declared
 * dependencies. Every binding is a singleton for the life of the process.
 * A command resolves its application (`ServeApplication`,
 * `AcpProxyApplication`) once; nothing else asks the container.
 *
 * Start-up is asynchronous and fails closed. The one binding that reaches
 * back into the container is `PolicyStartup` (`lazyPolicyStartup`): on
 * first use it imports policy-module.ts, which imports @termgate/policy,
 * loads it and resolves the started policy side (see there). `serve`
 * resolves ServeApplication at once, so the protocol answers while that
 * runs, and its TERMINAL_HOST waits for the gate (nothing runs before it;
 * if it never starts, every verb fails). `acp-proxy` waits for the start
 * before it starts the agent.
 *
 * inversify itself loads `reflect-metadata/lite` (the Reflect metadata API
 * without its internal polyfills), through which the `@injectable`/`@inject`
 * decorators and `decorate` record their metadata; reflect-metadata is a
 * dependency of the cli as inversify's peer dependency.
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

  container.bind<PolicyStartup>(POLICY_STARTUP).toConstantValue(lazyPolicyStartup(container));
  container
    .bind<PolicyRuntime>(POLICY_RUNTIME)
    .toResolvedValue((startup: PolicyStartup) => startup.runtime(), [POLICY_STARTUP]);
  // Available at once; every verb waits for the gated host, and fails if it never starts.
  container
    .bind<TerminalHost>(TERMINAL_HOST)
    .toResolvedValue((startup: PolicyStartup) => new DeferredTerminalHost(startup.host()), [POLICY_STARTUP]);
  container
    .bind<ShutdownHook[]>(SHUTDOWN_HOOKS)
    .toResolvedValue((startup: PolicyStartup) => [closeAuditTrail(startup, notices)], [POLICY_STARTUP]);

  container
    .bind<OpenStdioTransport>(OPEN_STDIO_TRANSPORT)
    .toConstantValue(
      (input, output, transportOptions) => new StdioTransport(input, output, transportOptions),
    );
  // The authorizer and the extra routes are the authorization side's: unbound, HTTP serves loopback only.
  container
    .bind<OpenHttpTransport>(OPEN_HTTP_TRANSPORT)
    .toResolvedValue(openHttpTransport, [
      SERVE_CONFIG,
      ROOT_LOGGER,
      { serviceIdentifier: REQUEST_AUTHORIZER, optional: true },
      { serviceIdentifier: HTTP_GET_ROUTES, optional: true },
    ]);
  container.bind<SchemaValidator>(SCHEMA_VALIDATOR).to(AjvSchemaValidator);
  container
    .bind(MCP_SERVER_OPTIONS)
    .toResolvedValue(mcpServerOptions, [SERVE_CONFIG, ROOT_LOGGER, POLICY_STARTUP]);
  container.bind(ACP_PROXY_OPTIONS).toResolvedValue(acpProxyOptions, [SERVE_CONFIG, ROOT_LOGGER]);
  container.bind(McpServer).toSelf();
  container.bind(AcpProxy).toSelf();
  container.bind(ServeApplication).toSelf();
  container.bind(AcpProxyApplication).toSelf();
  return container;
}

/**
 * Loads policy-module.ts on first use and resolves the started policy side
 * from it: the lazy edge of the graph, so that the protocol answers before
 * @termgate/policy loads. The start is shared; a failed start stays failed.
 */
function lazyPolicyStartup(container: Container): PolicyStartup {
  let runtime: Promise<PolicyRuntime> | null = null;
  let host: Promise<ProcessTerminalHost> | null = null;
  const startup: PolicyStartup = {
    runtime: () => {
      runtime ??= import('./policy-module.js')
        .then(({ policyModule }) => container.loadAsync(policyModule))
        .then(() => container.getAsync<PolicyRuntime>(POLICY_RUNTIME_STARTED));
      return runtime;
    },
    host: () => {
      host ??= startup.runtime().then(() => container.getAsync(ProcessTerminalHost));
      return host;
    },
  };
  return startup;
}

/** The shutdown hook that ends the audit trail (its stop record) and prints its head as an anchor. */
function closeAuditTrail(startup: PolicyStartup, notices: Notices): ShutdownHook {
  return async (reason) => {
    const runtime = await startup.runtime().catch(() => null);
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
  };
}
