import { buildContainer } from '../composition/composition-root.js';
import { ServeApplication } from '../serve/serve-application.js';
import type { ServeConfig } from '../serve/serve-config.js';
import { TERMGATE_VERSION } from '../version.js';
import type { CliIo } from './cli-io.js';
import { HTTP_OPTIONS_USAGE, HTTP_PARSE_OPTIONS, httpServeConfig } from './http-options.js';
import {
  parseRuntimeArgs,
  RUNTIME_OPTIONS_USAGE,
  runtimeConfig,
  runtimeValue,
  secondsOption,
} from './runtime-options.js';
import { startProcess } from './start-process.js';
import { printUsage, reportUsageError, UsageError, wantsHelp } from './usage.js';

export const SERVE_USAGE = `Usage: termgate serve [OPTION]...

Serves MCP (2026-07-28 and 2025-11-25) on stdin/stdout, or over Streamable HTTP
with --http (docs/HTTP.md). Logs go to stderr.
  -v, --version      print the version and exit
${HTTP_OPTIONS_USAGE}
  --approval-state-ttl SECONDS
                     how long a 2026-07-28 approval round trip's requestState is accepted
                     (default: 300; 0 makes every state expired)
${RUNTIME_OPTIONS_USAGE}`;

/** Printed to stderr when a person runs `serve` in a terminal. */
export function connectHint(bin: string): string {
  const node = process.execPath;
  return `termgate speaks MCP on stdin/stdout: an MCP client launches it, a person does not type into it.
Register it with a client, for example:
  Claude Code: claude mcp add termgate -- ${node} ${bin} serve
  Codex (~/.codex/config.toml): [mcp_servers.termgate] command = "${node}" args = ["${bin}", "serve"]
  VS Code (.vscode/mcp.json): {"servers": {"termgate": {"type": "stdio", "command": "${node}", "args": ["${bin}", "serve"]}}}
Press Ctrl-D to stop.
`;
}

export { UsageError };

export function parseServeArgs(argv: readonly string[], cwd: string): ServeConfig {
  const { values, positionals } = parseRuntimeArgs(argv, {
    'approval-state-ttl': { type: 'string' },
    ...HTTP_PARSE_OPTIONS,
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument: ${positionals[0]}`);
  const config = runtimeConfig(runtimeValue(values), values['audit-fsync'] === true, cwd);
  const stateTtl = secondsOption(runtimeValue(values)('--approval-state-ttl'), '--approval-state-ttl', 0);
  const http = httpServeConfig(values, cwd);
  return {
    ...config,
    ...(stateTtl !== undefined && { approvalStateTtlMs: stateTtl }),
    ...(http !== undefined && { http }),
  };
}

/**
 * `termgate serve`. Resolves with the exit code once the server stopped:
 * on stdin EOF, SIGTERM or SIGINT every terminal is killed and the code is
 * 0; 1 when the policy gate could not start; 2 on a usage error.
 */
export async function serveCommand(argv: readonly string[], io: CliIo): Promise<number> {
  if (wantsHelp(argv)) return printUsage(io, SERVE_USAGE);
  if (argv.includes('--version') || argv.includes('-v')) {
    io.stdout.write(`${TERMGATE_VERSION}\n`);
    return 0;
  }
  let config: ServeConfig;
  try {
    config = parseServeArgs(argv, process.cwd());
  } catch (error) {
    if (error instanceof UsageError) return reportUsageError(io, 'serve', error.message);
    throw error;
  }
  const { logger, notices } = await startProcess('serve', config, io);
  if (config.http === undefined && (io.stdin as { isTTY?: boolean }).isTTY) {
    io.stderr.write(connectHint(process.argv[1] ?? 'termgate'));
  }
  const app = buildContainer(config, logger, notices, { reclaimExited: true }).get(ServeApplication);
  // The policy gate starts while the protocol already answers; no terminal
  // verb runs before it is ready. If it cannot start, serve stops with exit
  // code 1: no policy, no audit trail, no commands.
  // Whatever stdin does: the exit code waits for the gate's outcome, so a bad
  // --audit path with stdin already closed still says why and exits 1.
  let componentDied = false;
  const started = app.policyRuntime().then(
    (runtime) => {
      // A sandbox part that dies (its namespace holder, the relay) stops the server cleanly: pending
      // requests answered, terminals ended, the trail's stop record, the runtime directory removed.
      void runtime.sandbox?.failed.then((reason) => {
        componentDied = true;
        notices.problem(`stopping: ${reason}`);
        void app.stop(reason);
      });
      return true;
    },
    (error: unknown) => {
      notices.problem(`refusing to start: ${(error as Error).message}`);
      void app.stop('the policy gate could not start');
      return false;
    },
  );
  const onSignal = (signal: NodeJS.Signals): void => {
    void app.stop(signal);
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  try {
    if (config.http === undefined) {
      await app.run(io.stdin, io.stdout, { endOutputOnClose: io.stdout !== process.stdout });
    } else {
      const listening = await app.runHttp().catch((error: unknown) => {
        notices.problem(`refusing to start: ${(error as Error).message}`);
        return app.stop('the HTTP transport could not start').then(() => false);
      });
      if (!listening) return 1;
    }
    return (await started) && !componentDied ? 0 : 1;
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}
