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
  termgate serve [--policy FILE] [--audit FILE] [--audit-fsync] [--shell PATH] [--log-level LEVEL]
                 [--audit-rotate-size SIZE] [--audit-rotate-age DURATION] [--audit-signing-key FILE]
  termgate policy check FILE
  termgate policy test FILE
  termgate policy explain FILE [--json] [--cwd DIR] [--env NAME=VALUE]... [--argv] -- COMMAND...
  termgate policy explain FILE --json < requests.jsonl
  termgate acp-proxy [--policy FILE] [--audit FILE] [--audit-fsync] [--shell PATH] [--log-level LEVEL] -- AGENT [ARG...]
  termgate audit verify FILE|DIR... [--anchor SEQ:HASH]... [--public-key FILE]... [--json]
  termgate audit keygen FILE
  termgate audit report FILE|DIR... --html OUT [--public-key FILE]...
  termgate audit show FILE|DIR... [--since WHEN] [--decision allow|deny] [--terminal ID] [--client NAME]
                      [--grep REGEX] [--json | --summary]
  termgate --version
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
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    (name === undefined ? io.stderr : io.stdout).write(USAGE);
    return name === undefined ? 2 : 0;
  }
  const load = COMMANDS[name];
  if (!load) {
    io.stderr.write(`termgate: unknown command "${name}"\n\n${USAGE}`);
    return 2;
  }
  return (await load())(rest, io);
}

main(process.argv.slice(2), { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr }).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`termgate: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exitCode = 1;
  },
);
