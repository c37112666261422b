#!/usr/bin/env node
/**
 * Benchmark baseline: the smallest stdio MCP server built on
 * `@modelcontextprotocol/server@2.4.0` that does the same work as one
 * termgate create+wait pair. Its single tool `terminal_run` spawns a command
 * (no shell), waits for it to exit and returns the exit code.
 *
 * Served through `serveStdio`, so it speaks both eras exactly as the SDK does
 * (`server/discover` → 2026-07-28; `initialize` → 2025-era instance).
 * Not a test and not shipped: `bench/mcp/run.mjs` spawns it side by side with
 * `termgate serve`.
 */
import { spawn } from 'node:child_process';
import { fromJsonSchema, McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';

const inputSchema = fromJsonSchema({
  type: 'object',
  properties: {
    command: { type: 'string', minLength: 1 },
    args: { type: 'array', items: { type: 'string' } },
  },
  required: ['command'],
  additionalProperties: false,
});

const outputSchema = fromJsonSchema({
  type: 'object',
  properties: {
    exitCode: { type: ['integer', 'null'] },
    signal: { type: ['string', 'null'] },
  },
  required: ['exitCode', 'signal'],
  additionalProperties: false,
});

/** Runs `command args…` to completion; resolves with its exit code and signal. */
function run(command, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', (exitCode, signal) => resolve({ exitCode, signal }));
  });
}

function createServer() {
  const server = new McpServer(
    { name: 'sdk-baseline', version: '2.4.0' },
    { capabilities: { tools: {} }, instructions: 'Benchmark baseline for termgate.' },
  );
  server.registerTool(
    'terminal_run',
    {
      title: 'Run a command to completion',
      description: 'Spawns a command (no shell), waits for it to exit and returns its exit code.',
      inputSchema,
      outputSchema,
      annotations: { destructiveHint: true, openWorldHint: true },
    },
    async ({ command, args }) => {
      try {
        const result = await run(command, args ?? []);
        return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
      } catch (error) {
        return { content: [{ type: 'text', text: `Spawn failed: ${error.message}` }], isError: true };
      }
    },
  );
  return server;
}

serveStdio(createServer, { onerror: (error) => process.stderr.write(`sdk-baseline: ${error.message}\n`) });
