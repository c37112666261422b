#!/usr/bin/env node
/**
 * Benchmark peer: the MCP SDK reference-style stdio server with one tool,
 * `run_command`, that runs each command through Claude Code's sandbox
 * runtime (`@anthropic-ai/sandbox-runtime`: bubblewrap + seccomp, network
 * only through its host-side proxies) the way Claude Code wraps a Bash call:
 * `SandboxManager.initialize` once, `wrapWithSandbox` per command, then
 * `bash -c` on the wrapped line, output returned.
 *
 * Needs Node ≥ 22.12 (the runtime's engines field) and the peers installed by
 * bench/mcp/first-command.mjs (`--peers DIR`, given here as argv[2]); the
 * writable directory is argv[3]. Not a test and not shipped.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { fromJsonSchema, McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';

const [peers, writable] = process.argv.slice(2);
const { SandboxManager } = await import(
  pathToFileURL(path.join(peers, 'node_modules/@anthropic-ai/sandbox-runtime/dist/index.js')).href
);
await SandboxManager.initialize({
  network: { allowedDomains: [], deniedDomains: [] },
  filesystem: { denyRead: [], allowWrite: [writable], denyWrite: [] },
});

const inputSchema = fromJsonSchema({
  type: 'object',
  properties: { command: { type: 'string', minLength: 1 } },
  required: ['command'],
  additionalProperties: false,
});

function run(line) {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', line], { cwd: writable, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.once('error', reject);
    child.once('close', (exitCode) => resolve({ exitCode, output }));
  });
}

function createServer() {
  const server = new McpServer({ name: 'srt-reference', version: '0.0.83' }, { capabilities: { tools: {} } });
  server.registerTool(
    'run_command',
    { description: 'Runs a bash command in the sandbox runtime and returns its output.', inputSchema },
    async ({ command }) => {
      const result = await run(await SandboxManager.wrapWithSandbox(command));
      return { content: [{ type: 'text', text: result.output }], isError: result.exitCode !== 0 };
    },
  );
  return server;
}

serveStdio(createServer, { onerror: (error) => process.stderr.write(`srt-reference: ${error.message}\n`) });
