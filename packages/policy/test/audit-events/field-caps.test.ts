import { createHash } from 'node:crypto';
import type { GateRequest } from '@termgate/termhost';
import { decisionEvent, exitEvent } from '../../src/audit-events/events.js';
import { cutUtf8, FIELD_CAPS } from '../../src/audit-events/field-caps.js';

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

function request(
  command: string,
  overrides: Partial<GateRequest['spec']> = {},
  clientName = 'c',
): GateRequest {
  return {
    verb: 'create',
    terminalId: 't1',
    caller: { clientName, clientVersion: '1', protocol: 'mcp/2025-11-25' },
    spec: {
      command,
      args: null,
      cwd: '/w',
      env: {},
      outputByteLimit: 1024,
      argv: ['bash', '--noprofile', '--norc', '-c', command],
      ...overrides,
    },
  };
}

describe('audit records: bounded client fields', () => {
  test('a 3 MiB command line and a 100 KB client name give a small record with lengths and digests', () => {
    const command = `echo ${'x'.repeat(3 * 1024 * 1024)}`;
    const name = 'é'.repeat(50_000);
    const reason = `refused: ${command}`;
    const event = decisionEvent(request(command, {}, name), {
      decision: 'deny',
      ruleIds: ['r'],
      reason,
      subcommands: [{ program: 'echo', argv: ['echo', 'x'.repeat(3 * 1024 * 1024)] } as never],
    });
    const size = Buffer.byteLength(JSON.stringify(event));
    expect(size).toBeLessThan(40 * 1024);
    const process = event.process as { command_line: string; args: string[] };
    expect(Buffer.byteLength(process.command_line)).toBe(FIELD_CAPS['process.command_line']);
    expect(process.args.every((a) => Buffer.byteLength(a) <= FIELD_CAPS['process.args'])).toBe(true);
    const termgate = event.termgate as {
      truncated: Record<string, { length: number; sha256: string }>;
      client: { name: string };
      subcommands: unknown[];
    };
    expect(termgate.truncated['process.command_line']).toEqual({
      length: Buffer.byteLength(command),
      sha256: sha256(command),
    });
    expect(termgate.truncated['termgate.client.name']).toEqual({
      length: Buffer.byteLength(name),
      sha256: sha256(name),
    });
    expect(termgate.client.name).toBe('é'.repeat(128)); // 256 bytes, no character split
    expect(termgate.truncated['event.reason']?.length).toBe(Buffer.byteLength(reason));
    expect(termgate.subcommands).toEqual([]);
    expect(termgate.truncated['termgate.subcommands']).toBeDefined();
  });

  test('fields within their caps are recorded whole, without a truncated map', () => {
    const event = decisionEvent(request('ls -l'), { decision: 'allow', ruleIds: [], reason: 'ok' });
    expect((event.process as { command_line: string }).command_line).toBe('ls -l');
    expect(event.termgate).not.toHaveProperty('truncated');
  });

  test('spawn and exit records cap the client name too', () => {
    const event = exitEvent({
      terminalId: 't',
      caller: { clientName: 'z'.repeat(100_000) },
      exitStatus: { exitCode: 0, signal: null, timedOut: false },
      durationMs: 1,
      totalBytes: 0,
      droppedBytes: 0,
      outputSha256: null,
    });
    expect(Buffer.byteLength(JSON.stringify(event))).toBeLessThan(2048);
  });

  test('cutUtf8 never splits a character', () => {
    expect(cutUtf8('aé', 2)).toBe('a');
    expect(cutUtf8('a😀', 4)).toBe('a');
    expect(cutUtf8('a😀', 5)).toBe('a😀');
  });

  test('an exit record says when processes were left running', () => {
    const base = {
      terminalId: 't',
      caller: {},
      durationMs: 1,
      totalBytes: 0,
      droppedBytes: 0,
      outputSha256: null,
    };
    const left = exitEvent({
      ...base,
      exitStatus: { exitCode: 0, signal: null, timedOut: false, processesLeft: true },
    });
    expect(left.termgate).toMatchObject({ processes_left: true });
    const clean = exitEvent({ ...base, exitStatus: { exitCode: 0, signal: null, timedOut: false } });
    expect(clean.termgate).not.toHaveProperty('processes_left');
  });
});
