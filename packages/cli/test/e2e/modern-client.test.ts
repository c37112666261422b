/**
 * `termgate serve` driven by the real v2 client, `@modelcontextprotocol/client`
 * 2.4.0, over its stdio transport. The client negotiates with
 * `versionNegotiation: { mode: 'auto' }`: it probes with `server/discover`
 * (in a throw-away sibling process, as the SDK does for its own stdio
 * transport) and only settles on the modern era on definitive modern
 * evidence; anything else silently falls back to `initialize`, which the
 * first test would catch.
 */
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import {
  expectCancelledWait,
  expectKillAndRelease,
  expectStreamedRun,
  expectToolList,
  type ToolCaller,
} from './support/client-scenarios.js';
import {
  assertServerBuilt,
  auditArgs,
  defaultPolicyArgs,
  MODERN_VERSION,
  REPO_ROOT,
  removeAuditFiles,
  SERVER_BIN,
} from './support/wire-server.js';

describe.each([
  ['sandbox off', false],
  ['sandbox on: the shipped default policy', true],
] as const)('modern client (@modelcontextprotocol/client 2.4.0, 2026-07-28), %s', (_mode, sandboxed) => {
  let client: Client;
  let stderr = '';
  let caller: ToolCaller;

  beforeAll(async () => {
    assertServerBuilt();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [SERVER_BIN, 'serve', ...auditArgs(), ...defaultPolicyArgs(sandboxed)],
      cwd: REPO_ROOT,
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    client = new Client(
      { name: 'termgate-e2e-modern', version: '0.0.0' },
      { versionNegotiation: { mode: 'auto', probe: { timeoutMs: 15_000 } } },
    );
    await client.connect(transport);
    caller = {
      listTools: () => client.listTools(),
      callTool: (name, args, onprogress, signal) =>
        client.callTool(
          { name, arguments: args },
          {
            timeout: 20_000,
            ...(onprogress !== undefined && { onprogress }),
            ...(signal !== undefined && { signal }),
          },
        ),
    };
  });

  afterAll(async () => {
    await client?.close();
    removeAuditFiles();
  });

  afterEach(() => {
    // Only shown when a test failed and someone reads the output.
    if (stderr.includes('"level":50') || stderr.includes('"level":60')) process.stderr.write(stderr);
  });

  test('negotiates 2026-07-28 through server/discover', () => {
    expect(client.getProtocolEra()).toBe('modern');
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN_VERSION);
    const discovered = client.getDiscoverResult();
    expect(discovered?.supportedVersions).toEqual([MODERN_VERSION]);
    expect(discovered?.capabilities).toMatchObject({ tools: {} });
    expect(client.getServerVersion()).toMatchObject({ name: 'termgate', version: expect.any(String) });
    expect(client.getServerCapabilities()).toMatchObject({ tools: {} });
    expect(client.getInstructions()).toEqual(expect.any(String));
  });

  test('the instructions and terminal_create say what the sandbox means, only when it is on', async () => {
    const create = (await client.listTools()).tools.find((tool) => tool.name === 'terminal_create');
    for (const text of [client.getInstructions() ?? '', create?.description ?? '']) {
      expect(text.includes('Commands run in a sandbox')).toBe(sandboxed);
      expect(text.includes('Git directories (.git) are read-only')).toBe(sandboxed);
      expect(text.includes('only the hosts the policy allowlists')).toBe(sandboxed);
      expect(text.includes('/tmp is private')).toBe(sandboxed);
    }
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
