/**
 * The terminal tools over a real ProcessTerminalHost, where the timing of the
 * host's gate matters: a wait whose timeout runs out while the gate (or the
 * host itself) is still deciding answers with the host's decision.
 */
import { type Gate, type GateRequest, ProcessTerminalHost } from '@termgate/termhost';
import { CrossSpawnProcessSpawner, DeferredTerminalHost } from '@termgate/termhost/adapters';
import { AllowAllGate, NoopTerminalObserver } from '../../../../../test-support/terminal-doubles.js';
import { AjvSchemaValidator } from '../../../src/adapters/ajv-schema-validator.js';
import { McpServer } from '../../../src/mcp/mcp-server.js';
import { InMemoryChannel, type TestClient } from '../../support/in-memory-channel.js';

const MODERN = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};

const hosts: ProcessTerminalHost[] = [];
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((host) => host.closeAll()));
});

function realHost(gate: Gate = new AllowAllGate()): ProcessTerminalHost {
  const host = new ProcessTerminalHost({
    gate,
    observer: new NoopTerminalObserver(),
    spawner: new CrossSpawnProcessSpawner(),
    killGraceMs: 300,
  });
  hosts.push(host);
  return host;
}

function serve(host: ConstructorParameters<typeof McpServer>[0]): TestClient {
  const server = new McpServer(host, new AjvSchemaValidator(), {
    serverInfo: { name: 'termgate', version: '0' },
  });
  const channel = new InMemoryChannel();
  server.connect(channel);
  return channel.client;
}

interface Result {
  structuredContent?: Record<string, unknown>;
  content: { type: string; text: string }[];
  isError?: boolean;
}

async function call(client: TestClient, id: number, name: string, args: object): Promise<Result> {
  return (await client.request(id, 'tools/call', { name, arguments: args, _meta: MODERN })).result as Result;
}

const text = (result: Result): string => result.content.map((block) => block.text).join('');

describe('terminal_wait_for_exit when the timeout runs out while the host decides', () => {
  it('answers with the refusal of a gate slower than the timeout, not "running"', async () => {
    const gate = {
      async decide(request: GateRequest) {
        if (request.verb !== 'wait') return { allow: true as const };
        await new Promise((resolve) => setTimeout(resolve, 200));
        return { allow: false as const, reason: 'waits are not allowed here', ruleIds: ['no-waits'] };
      },
    };
    const client = serve(realHost(gate));
    const created = await call(client, 1, 'terminal_create', { command: 'sleep 1000', waitSeconds: 0 });
    const terminalId = created.structuredContent?.terminalId;
    const waited = await call(client, 2, 'terminal_wait_for_exit', { terminalId, timeoutSeconds: 0.01 });
    expect(waited.isError).toBe(true);
    expect(text(waited)).toBe(
      'Denied by policy: waits are not allowed here. Rules: no-waits. Nothing was run. Do not retry the same command; choose another approach or ask the user.',
    );
  });

  it('answers "unknown terminal id" when the host becomes ready only after the timeout', async () => {
    let ready!: (host: ProcessTerminalHost) => void;
    const client = serve(new DeferredTerminalHost(new Promise((resolve) => (ready = resolve))));
    const waiting = call(client, 1, 'terminal_wait_for_exit', { terminalId: 'nope', timeoutSeconds: 0.01 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    ready(realHost());
    const waited = await waiting;
    expect(waited.isError).toBe(true);
    expect(text(waited)).toMatch(/^Unknown terminal id: .*\(No terminal nope\)$/);
  });
});
