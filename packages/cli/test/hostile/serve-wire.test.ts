/**
 * Hostile-wire tests of the built server (`termgate serve`): exact ids,
 * duplicate ids in flight, a create racing stdin EOF, and a client that
 * stops reading. Lines are compared as text where bytes matter.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  isResponseTo,
  modern,
  pause,
  removeAuditFiles,
  structuredResult,
  type WireMessage,
  WireServer,
} from '../e2e/support/wire-server.js';

afterAll(removeAuditFiles);

/** The raw stdout line answering the request whose id text is `idText`. */
async function rawAnswer(server: WireServer, idText: string): Promise<string> {
  const prefix = `{"id":${idText},`;
  for (let i = 0; i < 400; i++) {
    const line = server.lines.find((l) => l.startsWith(prefix) || l.includes(`"id":${idText},`));
    if (line !== undefined) return line;
    await pause(25);
  }
  throw new Error(`no answer for id ${idText}\n${server.diagnostics()}`);
}

describe('serve: ids are echoed byte for byte', () => {
  let server: WireServer;
  beforeAll(() => {
    server = WireServer.start(['--log-level', 'silent']);
  });
  afterAll(() => server.dispose());

  test.each(['9007199254740993', '12345678901234567890123', '1E2', '-0', '"9007199254740993"'])(
    'the id %s comes back as sent',
    async (idText) => {
      server.sendRaw(`{"jsonrpc":"2.0","id":${idText},"method":"ping"}\n`);
      const line = await rawAnswer(server, idText);
      expect(line).toContain(`"id":${idText},`);
      expect(JSON.parse(line).result).toEqual({});
    },
  );

  test('a fractional id (1e-400) is refused with -32600, echoing it as sent', async () => {
    server.sendRaw('{"jsonrpc":"2.0","id":1e-400,"method":"ping"}\n');
    const line = await rawAnswer(server, '1e-400');
    expect(JSON.parse(line).error.code).toBe(-32600);
  });
});

describe('serve: an id already in flight', () => {
  test('is refused with -32600 and does not run; a cancel then ends the first one, and nothing answers it', async () => {
    const server = WireServer.start(['--log-level', 'silent']);
    try {
      const created = await server.request(
        'tools/call',
        modern({ name: 'terminal_create', arguments: { command: 'sleep', args: ['1000'] } }),
      );
      const { terminalId } = structuredResult(created);
      const wait = modern({ name: 'terminal_wait_for_exit', arguments: { terminalId, timeoutSeconds: 60 } });
      const from = server.mark();
      server.send({ jsonrpc: '2.0', id: 'd', method: 'tools/call', params: wait });
      // The duplicate would create a terminal if it ran: count the spawns in the trail afterwards.
      server.send({
        jsonrpc: '2.0',
        id: 'd',
        method: 'tools/call',
        params: modern({ name: 'terminal_create', arguments: { command: 'true' } }),
      });
      const refused = await server.waitFor((m) => isResponseTo(m, 'd'), 'the duplicate refused', { from });
      expect(refused.error?.code).toBe(-32600);
      expect(String(refused.error?.message)).toMatch(/already used by a request in flight/);
      server.sendNotification('notifications/cancelled', { requestId: 'd' });
      expect((await server.request('ping')).result).toEqual({});
      await pause(300);
      expect(server.messagesSince(from).filter((m: WireMessage) => m.id === 'd')).toHaveLength(1);
      const kill = await server.request(
        'tools/call',
        modern({ name: 'terminal_kill', arguments: { terminalId } }),
      );
      expect(kill.result).toBeDefined();
      await server.closeStdin();
      const trail = readFileSync(server.auditPath, 'utf8');
      expect(trail.match(/"event.action":"terminal.spawn"|"action":"terminal.spawn"/g) ?? []).toHaveLength(1);
    } finally {
      await server.dispose();
    }
  });
});

describe('serve: the audit trail does not grow with the input', () => {
  test('a 3 MiB command is refused before any record; a 100 KiB command and a 100 KB client name are capped', async () => {
    const server = WireServer.start(['--log-level', 'silent']);
    try {
      const hugeName = 'n'.repeat(100_000);
      const init = await server.request('initialize', {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: hugeName, version: 'v'.repeat(5000) },
      });
      expect(init.result).toBeDefined();
      const legacyCall = (args: Record<string, unknown>) =>
        server.request('tools/call', { name: 'terminal_create', arguments: args });
      const refused = await legacyCall({ command: `echo ${'x'.repeat(3 * 1024 * 1024)}` });
      expect(refused.result?.isError).toBe(true);
      expect(JSON.stringify(refused.result)).toMatch(/is 3145733 bytes; the limit is 131071/);
      const big = `echo ${'y'.repeat(100 * 1024)}`;
      const allowed = await legacyCall({ command: big });
      expect(allowed.result?.isError).not.toBe(true);
      await server.closeStdin();
      const lines = readFileSync(server.auditPath, 'utf8').trim().split('\n');
      for (const line of lines) expect(Buffer.byteLength(line)).toBeLessThan(48 * 1024);
      const records = lines.map((line) => JSON.parse(line));
      const create = records.find((r) => r.event.action === 'terminal-create');
      expect(create.process.command_line.length).toBeLessThanOrEqual(8192);
      const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
      expect(create.termgate.truncated['process.command_line']).toEqual({
        length: Buffer.byteLength(big),
        sha256: sha256(big),
      });
      expect(create.termgate.truncated['termgate.client.name']).toEqual({
        length: 100_000,
        sha256: sha256(hugeName),
      });
      expect(create.termgate.client.name).toBe('n'.repeat(256));
      // Only the allowed command was recorded: the oversized one never reached the gate.
      expect(records.filter((r) => r.event.action === 'terminal-create')).toHaveLength(1);
      for (const r of records.filter((r) => r.termgate?.client)) {
        expect(r.termgate.client.name.length).toBeLessThanOrEqual(256);
      }
    } finally {
      await server.dispose();
    }
  });
});

describe('serve: a create racing stdin EOF', () => {
  test('is answered with what happened: a terminal id exactly when the trail shows its spawn', async () => {
    const outcomes = { spawned: 0, refused: 0 };
    for (let trial = 0; trial < 21; trial++) {
      const server = WireServer.start(['--log-level', 'silent']);
      try {
        // Ready: the gate has started (a create waits for it; the race is with the spawn).
        await server.request(
          'tools/call',
          modern({ name: 'terminal_create', arguments: { command: 'true' } }),
        );
        const id = server.id();
        server.send({
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: modern({ name: 'terminal_create', arguments: { command: 'sleep', args: ['1000'] } }),
        });
        await pause(trial % 7);
        await server.closeStdin(15_000);
        const answer = server.messages.find((m) => m.id === id);
        const records = readFileSync(server.auditPath, 'utf8')
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line));
        const spawnedIds = records
          .filter((r) => r.event.action === 'terminal-spawn')
          .map((r) => r.termgate.terminal_id as string);
        const result = answer?.result as
          | { isError?: boolean; structuredContent?: { terminalId?: string } }
          | undefined;
        // A create that spawned and then lost its one-call wait to the shutdown says so, naming its handle.
        const startedAs = /The command started as terminalId \\?"([^"\\]+)/.exec(
          JSON.stringify(answer ?? {}),
        )?.[1];
        if (result !== undefined && result.isError !== true) {
          const terminalId = result.structuredContent?.terminalId;
          expect(spawnedIds).toContain(terminalId);
          outcomes.spawned++;
        } else if (startedAs !== undefined) {
          expect(spawnedIds).toContain(startedAs);
          outcomes.spawned++;
        } else {
          // Refused or never answered: then nothing of it ran (only the readiness probe spawned).
          expect(spawnedIds).toHaveLength(1);
          expect(JSON.stringify(answer ?? {})).not.toMatch(/while the command was starting/);
          outcomes.refused++;
        }
      } finally {
        await server.dispose();
      }
    }
    expect(outcomes.spawned + outcomes.refused).toBe(21);
  }, 180_000);
});
