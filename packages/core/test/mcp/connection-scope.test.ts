/**
 * `McpServer.connect(channel, { scope })`: every tool call on the connection
 * reaches the host with that scope (an HTTP transport passes its principal's
 * id), in both eras; without one, the default scope as on stdio.
 */
import { AjvSchemaValidator } from '../../src/adapters/ajv-schema-validator.js';
import { McpServer } from '../../src/mcp/mcp-server.js';
import { InMemoryChannel } from '../support/in-memory-channel.js';
import { ScriptedTerminalHost } from '../support/scripted-terminal-host.js';

const MODERN = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};
const create = (meta?: object) => ({
  name: 'terminal_create',
  arguments: { command: 'true', waitSeconds: 0 },
  ...(meta && { _meta: meta }),
});

describe('McpServer: a connection-level scope', () => {
  it.each([
    ['2026-07-28', MODERN],
    ['2025-11-25', undefined],
  ])(
    'reaches the host on every %s call of the connection; another connection keeps its own',
    async (_era, meta) => {
      const host = new ScriptedTerminalHost();
      const server = new McpServer(host, new AjvSchemaValidator(), {
        serverInfo: { name: 'termgate', version: '0' },
      });
      const scoped = new InMemoryChannel();
      const plain = new InMemoryChannel();
      server.connect(scoped, { scope: 'https://issuer.test#alice' });
      server.connect(plain);
      await scoped.client.request(1, 'tools/call', create(meta));
      await plain.client.request(1, 'tools/call', create(meta));
      const scopes = host.calls.filter((call) => call.verb === 'create').map((call) => call.caller?.scope);
      expect(scopes).toEqual(['https://issuer.test#alice', undefined]);
    },
  );
});
