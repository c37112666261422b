#!/usr/bin/env node
/**
 * The `termgate` command: dispatches to one subcommand. Each subcommand is
 * loaded only when chosen, so `serve` pays for no other command's modules.
 * The build bundles this file into `dist/bin.js` (scripts/bundle-cli.mjs).
 */
import type { CliCommand, CliIo } from './commands/cli-io.js';
import { TERMGATE_VERSION } from './version.js';

const USAGE = `termgate ${TERMGATE_VERSION}: a policy-gated terminal host for coding agents

Usage:
  termgate serve [--policy FILE] [--managed-policy FILE] [--audit FILE] [--audit-fsync] [--shell PATH]
                 [--log-level LEVEL] [--log-format json|pretty]
                 [--audit-rotate-size SIZE] [--audit-rotate-age DURATION] [--audit-signing-key FILE]
                 [--audit-checkpoint-every N] [--audit-checkpoint-interval DURATION]
                 [--approval-timeout SECONDS] [--approval-state-ttl SECONDS]
                 [--http HOST:PORT [--tls-key FILE --tls-cert FILE] [--allowed-origin ORIGIN]...
                  [--allowed-host NAME]...]
  termgate acp-proxy [same options as serve but --approval-state-ttl and the --http ones] -- AGENT [ARG...]
  termgate policy check FILE [--managed-policy FILE]
  termgate policy test FILE [--managed-policy FILE]
  termgate policy explain FILE [--managed-policy FILE] [--json] [--cwd DIR] [--env NAME=VALUE]... [--argv] -- COMMAND...
  termgate policy explain FILE --json < requests.jsonl
  termgate audit verify FILE|DIR... [--anchor SEQ:HASH]... [--public-key FILE]... [--json]
  termgate audit keygen FILE
  termgate audit report FILE|DIR... --html OUT [--public-key FILE]... [--redact-command keep|hash|cut:N] [--redact-args]
                        [--principal SUBJECT] [--principal-issuer ISSUER]
  termgate audit export FILE|DIR --otlp URL [--cursor FILE] [--follow] [--interval DURATION]
                        [--redact-command keep|hash|cut:N] [--redact-args] [--header NAME=VALUE]...
  termgate audit show FILE|DIR... [--since WHEN] [--decision allow|deny|ask] [--terminal ID] [--client NAME]
                      [--principal SUBJECT] [--principal-issuer ISSUER] [--grep REGEX] [--json | --summary]
  termgate --version | -v
  termgate --help | -h | help

Every command takes -h/--help: its own usage, on stdout, exit 0.
Exit status: 2 on a usage error ("termgate COMMAND: MESSAGE" on stderr).
`;

const COMMANDS: Readonly<Record<string, () => Promise<CliCommand>>> = {
  serve: async () => (await import('./commands/serve.js')).serveCommand,
  audit: async () => (await import('./commands/audit.js')).auditCommand,
  policy: async () => (await import('./commands/policy.js')).policyCommand,
  'acp-proxy': async () => (await import('./commands/acp-proxy.js')).acpProxyCommand,
};

export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-v') {
    io.stdout.write(`${TERMGATE_VERSION}\n`);
    return 0;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(USAGE);
    return 0;
  }
  if (name === undefined) {
    // No command is a usage error; the whole usage is what a person needs then.
    io.stderr.write(USAGE);
    return 2;
  }
  const load = COMMANDS[name];
  if (!load) {
    io.stderr.write(`termgate: unknown command "${name}"\nRun "termgate --help" for usage.\n`);
    return 2;
  }
  return (await load())(rest, io);
}

/** Exit status of a command whose reader closed its stdout: 128 + SIGPIPE, as a shell reports a process that pipe killed. */
export const EXIT_CLOSED_PIPE = 141;

/**
 * `termgate audit show | head -1`: once the reader has gone, the rest of the
 * output has nowhere to go; the command ends quietly (no "write EPIPE" and
 * no stack) with `EXIT_CLOSED_PIPE`. Not for `serve` and `acp-proxy`, whose
 * stdout is the protocol channel: the transport handles a client that left.
 */
function endQuietlyWhenStdoutCloses(): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(EXIT_CLOSED_PIPE);
  });
}

const command = process.argv[2];
if (command !== 'serve' && command !== 'acp-proxy') endQuietlyWhenStdoutCloses();

main(process.argv.slice(2), { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr }).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`termgate: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exitCode = 1;
  },
);
