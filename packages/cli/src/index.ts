/** Public API of @termgate/cli: the composition root, for embedding and tests. Named exports only. */
export type { CliCommand, CliIo } from './commands/cli-io.js';
export { parseServeArgs, serveCommand } from './commands/serve.js';
export type { CompositionOptions } from './composition/composition-options.js';
export { buildContainer } from './composition/composition-root.js';
export type { PolicyRuntime } from './composition/policy-runtime.js';
export { POLICY_RUNTIME } from './composition/tokens.js';
export type { Notices } from './logging.js';
export { ServeApplication } from './serve/serve-application.js';
export type { ServeConfig } from './serve/serve-config.js';
export { TERMGATE_VERSION } from './version.js';
