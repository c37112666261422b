/**
 * The one-call path and the model-sized output, driven by each real client:
 * `@modelcontextprotocol/client` 2.4.0 in the modern era (2026-07-28, through
 * `server/discover`) and in its default legacy mode (2025-11-25, `initialize`),
 * and `@modelcontextprotocol/sdk` 1.32.2 (2025-11-25). Each suite has its own
 * `termgate serve` under the shipped default policy (maxTerminals 16).
 */
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { ToolCaller, ToolCallResult } from './support/client-scenarios.js';
import {
  expectBudgetedOutput,
  expectCancelledCreate,
  expectExitedTerminalsReclaimed,
  expectOneCallProgress,
  expectOneCallRun,
  expectRunningThenNewOutput,
} from './support/one-call-scenarios.js';
import {
  assertServerBuilt,
  auditArgs,
  REPO_ROOT,
  removeAuditFiles,
  SERVER_BIN,
} from './support/wire-server.js';

interface Connected {
  readonly caller: ToolCaller;
  readonly era: () => string | undefined;
  readonly close: () => Promise<void>;
}

const serverParams = () => ({
  command: process.execPath,
  args: [SERVER_BIN, 'serve', ...auditArgs()],
  cwd: REPO_ROOT,
  stderr: 'pipe' as const,
});

async function v2(mode: 'auto' | 'legacy'): Promise<Connected> {
  const client = new Client(
    { name: `termgate-e2e-onecall-${mode}`, version: '0.0.0' },
    { versionNegotiation: mode === 'auto' ? { mode, probe: { timeoutMs: 15_000 } } : { mode } },
  );
  await client.connect(new StdioClientTransport(serverParams()));
  return {
    caller: {
      listTools: () => client.listTools(),
      callTool: (name, args, onprogress, signal) =>
        client.callTool(
          { name, arguments: args },
          {
            timeout: 30_000,
            ...(onprogress !== undefined && { onprogress }),
            ...(signal !== undefined && { signal }),
          },
        ),
    },
    era: () => client.getProtocolEra(),
    close: () => client.close(),
  };
}

async function v1(): Promise<Connected> {
  const client = new V1Client({ name: 'termgate-e2e-onecall-v1', version: '0.0.0' });
  await client.connect(new V1StdioClientTransport(serverParams()));
  return {
    caller: {
      listTools: () => client.listTools(),
      callTool: async (name, args, onprogress, signal) =>
        (await client.callTool({ name, arguments: args }, undefined, {
          timeout: 30_000,
          ...(onprogress !== undefined && { onprogress }),
          ...(signal !== undefined && { signal }),
        })) as ToolCallResult,
    },
    era: () => 'legacy',
    close: () => client.close(),
  };
}

describe.each([
  ['@modelcontextprotocol/client 2.4.0, 2026-07-28', () => v2('auto'), 'modern'],
  ['@modelcontextprotocol/client 2.4.0, 2025-11-25', () => v2('legacy'), 'legacy'],
  ['@modelcontextprotocol/sdk 1.32.2, 2025-11-25', v1, 'legacy'],
] as const)('one-call path with %s', (_name, connect, era) => {
  let connected: Connected;

  beforeAll(async () => {
    assertServerBuilt();
    connected = await connect();
  });

  afterAll(async () => {
    await connected?.close();
    removeAuditFiles();
  });

  test(`speaks the ${era} era`, () => {
    expect(connected.era()).toBe(era);
  });

  test('a short command completes in one terminal_create call and stays readable', async () => {
    await expectOneCallRun(connected.caller);
  });

  test('progress streams during a create that waits', async () => {
    await expectOneCallProgress(connected.caller);
  });

  test('a command still running returns its handle and output so far; the wait returns only new output', async () => {
    await expectRunningThenNewOutput(connected.caller);
  });

  test('results stay within the character budget, keep head and tail, and the marker reads back', async () => {
    await expectBudgetedOutput(connected.caller);
  });

  test('exited terminals never exhaust maxTerminals; running ones get an actionable refusal', async () => {
    await expectExitedTerminalsReclaimed(connected.caller);
  });

  test('a cancelled create leaves the command running and the next result names its handle', async () => {
    await expectCancelledCreate(connected.caller);
  });
});
