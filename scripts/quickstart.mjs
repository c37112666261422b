#!/usr/bin/env node
// The README's main job: the built `termgate serve`, driven by a real MCP
// client (@modelcontextprotocol/client 2.4.0, which probes with
// server/discover and speaks 2026-07-28), printed as a readable transcript.
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const bin = fileURLToPath(new URL('../packages/cli/dist/bin.js', import.meta.url));
const say = (text) => process.stdout.write(`${text}\n`);
const show = (label, value) => say(`  ${label} ${JSON.stringify(value)}`);

const transport = new StdioClientTransport({
  command: process.execPath,
  args: [bin, 'serve', ...(process.argv.length > 2 ? process.argv.slice(2) : ['--log-level', 'warn'])],
  stderr: 'inherit',
});
const client = new Client(
  { name: 'termgate-quickstart', version: '1.0.0' },
  { versionNegotiation: { mode: 'auto' } },
);

say(`$ termgate serve ${process.argv.slice(2).join(' ')}`.trimEnd());
await client.connect(transport);
say(
  `connected: ${client.getServerVersion()?.name} ${client.getServerVersion()?.version}, protocol ${client.getNegotiatedProtocolVersion()}`,
);

const { tools } = await client.listTools();
say(`\n→ tools/list`);
for (const tool of tools) say(`  ${tool.name.padEnd(24)} ${tool.title}`);

const call = async (name, args, options) => {
  say(`\n→ ${name} ${JSON.stringify(args)}`);
  const result = await client.callTool({ name, arguments: args }, options);
  if (result.isError) say(`  error: ${result.content.map((c) => c.text).join(' ')}`);
  else show('←', result.structuredContent);
  return result.structuredContent;
};

const command = 'for i in 1 2 3; do echo "step $i"; sleep 0.3; done; echo "warning on stderr" >&2; exit 3';
const { terminalId } = await call('terminal_create', { command });
say('  (output streams as progress notifications while the client waits:)');
await call(
  'terminal_wait_for_exit',
  { terminalId, timeoutSeconds: 10 },
  {
    onprogress: ({ progress, message }) => say(`  … progress ${progress} bytes: ${JSON.stringify(message)}`),
  },
);
await call('terminal_output', { terminalId });
await call('terminal_release', { terminalId });

const sleeper = await call('terminal_create', { command: 'sleep', args: ['1000'] });
await call('terminal_wait_for_exit', { terminalId: sleeper.terminalId, timeoutSeconds: 0.5 });
await call('terminal_kill', { terminalId: sleeper.terminalId });
await call('terminal_output', { terminalId: sleeper.terminalId });
await call('terminal_release', { terminalId: sleeper.terminalId });
await call('terminal_output', { terminalId: sleeper.terminalId });

await client.close();
say('\nclosed: the server killed every terminal and exited.');
