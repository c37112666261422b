/**
 * A request id already used by a request the server has not answered yet is
 * refused, whether that request runs (in flight) or still waits for a slot
 * (queued by flow control), and the refused duplicate never runs.
 */
import { AjvSchemaValidator } from '../../src/adapters/ajv-schema-validator.js';
import { McpServer } from '../../src/mcp/mcp-server.js';
import { InMemoryChannel } from '../support/in-memory-channel.js';
import { ScriptedTerminalHost } from '../support/scripted-terminal-host.js';

const MODERN = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'test-client', version: '9.9.9' },
};

function toolCall(id: number, name: string, args: object) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, _meta: MODERN } };
}

describe('McpServer: duplicate request ids', () => {
  it('refuses a duplicate of an in-flight and of a queued request, and runs each original once', async () => {
    let finishKill!: () => void;
    const killing = new Promise<void>((resolve) => (finishKill = resolve));
    let killStarted!: () => void;
    const killRuns = new Promise<void>((resolve) => (killStarted = resolve));
    class SlowKillHost extends ScriptedTerminalHost {
      override async kill(id: string): Promise<void> {
        killStarted();
        await killing;
        return super.kill(id);
      }
    }
    const host = new SlowKillHost();
    const server = new McpServer(host, new AjvSchemaValidator(), {
      serverInfo: { name: 'termgate', version: '0.1.0-test' },
      maxActiveRequests: 1,
    });
    const channel = new InMemoryChannel();
    server.connect(channel);
    const client = channel.client;
    client.send(toolCall(1, 'terminal_create', { command: 'sleep', waitSeconds: 0 }));
    await client.response(1);
    // The kill holds the only slot (in flight); create 3 waits for it (queued).
    client.send(toolCall(2, 'terminal_kill', { terminalId: 't1' }));
    await killRuns;
    client.send(toolCall(3, 'terminal_create', { command: 'touch queued', waitSeconds: 0 }));
    client.send(toolCall(2, 'terminal_kill', { terminalId: 't1' }));
    client.send(toolCall(3, 'terminal_create', { command: 'touch duplicate', waitSeconds: 0 }));
    const errorFor = (id: number) => client.waitFor((m) => m.id === id && 'error' in m);
    for (const id of [2, 3]) {
      expect(await errorFor(id)).toMatchObject({
        error: { code: -32600, message: expect.stringMatching(/already used by a request in flight/) },
      });
    }
    finishKill();
    await client.waitFor((m) => m.id === 3 && 'result' in m);
    await client.request(4, 'tools/list', { _meta: MODERN });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const answers = (id: number) => client.received.filter((m) => m.id === id);
    expect(
      answers(2)
        .map((m) => ('result' in m ? 'result' : 'error'))
        .sort(),
    ).toEqual(['error', 'result']);
    expect(
      answers(3)
        .map((m) => ('result' in m ? 'result' : 'error'))
        .sort(),
    ).toEqual(['error', 'result']);
    expect(host.calls.filter((c) => c.verb === 'create')).toHaveLength(2);
    expect([...host.terminals.values()].map((t) => t.spec.command)).toEqual(['sleep', 'touch queued']);
    expect(host.calls.filter((c) => c.verb === 'kill')).toHaveLength(1);
  });
});
