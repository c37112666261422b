/** Public API of @termgate/cli: the composition root, for embedding and tests. Named exports only. */
export type { CliCommand, CliIo } from './commands/cli-io.js';
export { parseServeArgs, serveCommand } from './commands/serve.js';
export { buildServeContainer } from './serve/composition-root.js';
export { ServeApplication } from './serve/serve-application.js';
export type { ServeConfig } from './serve/serve-config.js';
export { TERMGATE_VERSION } from './version.js';
