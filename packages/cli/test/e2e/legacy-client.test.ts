/**
 * `termgate serve` driven by the legacy v1 client, `@modelcontextprotocol/sdk`
 * 1.32.2: the 2025-era `initialize` handshake (the client asks for its latest
 * version, 2025-11-25), then the same terminal scenarios as the modern suite.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  expectCancelledWait,
  expectKillAndRelease,
  expectStreamedRun,
  expectToolList,
  type ToolCaller,
  type ToolCallResult,
} from './support/client-scenarios.js';
import {
  assertServerBuilt,
  auditArgs,
  defaultPolicyArgs,
  LEGACY_VERSION,
  REPO_ROOT,
  removeAuditFiles,
  SERVER_BIN,
} from './support/wire-server.js';

/**
 * The v1 client hands the version from the `initialize` result to
 * `transport.setProtocolVersion` (an optional hook of its Transport
 * interface); recording it is the only way to read the negotiated version.
 */
class RecordingStdioTransport extends StdioClientTransport {
  negotiatedVersion: string | undefined;
  setProtocolVersion = (version: string): void => {
    this.negotiatedVersion = version;
  };
}

describe.each([
  ['sandbox off', false],
  ['sandbox on: the shipped default policy', true],
] as const)('legacy client (@modelcontextprotocol/sdk 1.32.2, 2025-11-25), %s', (_mode, sandboxed) => {
  let client: Client;
  let transport: RecordingStdioTransport;
  let caller: ToolCaller;

  beforeAll(async () => {
    assertServerBuilt();
    transport = new RecordingStdioTransport({
      command: process.execPath,
      args: [SERVER_BIN, 'serve', ...auditArgs(), ...defaultPolicyArgs(sandboxed)],
      cwd: REPO_ROOT,
      stderr: 'pipe',
    });
    client = new Client({ name: 'termgate-e2e-legacy', version: '0.0.0' });
    await client.connect(transport);
    caller = {
      listTools: () => client.listTools(),
      // The v1 result type is a union with the pre-2025 `{toolResult}` shape; termgate never sends that.
      callTool: async (name, args, onprogress, signal) =>
        (await client.callTool({ name, arguments: args }, undefined, {
          timeout: 20_000,
          ...(onprogress !== undefined && { onprogress }),
          ...(signal !== undefined && { signal }),
        })) as ToolCallResult,
    };
  });

  afterAll(async () => {
    await client?.close();
    removeAuditFiles();
  });

  test('initialize negotiates 2025-11-25 with termgate', () => {
    expect(transport.negotiatedVersion).toBe(LEGACY_VERSION);
    expect(client.getServerVersion()).toMatchObject({ name: 'termgate', version: expect.any(String) });
    expect(client.getServerCapabilities()).toEqual({ tools: {} });
    expect(client.getInstructions()).toEqual(expect.any(String));
  });

  test('lists the five terminal tools in order, with annotations and schemas', async () => {
    await expectToolList(caller);
  });

  test('creates a command, streams its output as progress while waiting, then reads it', async () => {
    await expectStreamedRun(caller);
  });

  test('kills a long command with SIGTERM, releases it, and the released id is an isError result', async () => {
    await expectKillAndRelease(caller);
  });

  test('an aborted wait is cancelled on the server; the command keeps running', async () => {
    await expectCancelledWait(caller);
  });
});
