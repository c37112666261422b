import { tmpdir } from 'node:os';
import type { Gate, GateDecision, GateRequest } from '@termgate/termhost';
import { ProcessTerminalHost } from '@termgate/termhost';
import { CrossSpawnProcessSpawner } from '@termgate/termhost/adapters';
import { NoopTerminalObserver } from '../../../../test-support/terminal-doubles.js';
import { AcpErrorCode } from '../../src/acp/acp-error-codes.js';
import { AcpTerminalConnection } from '../../src/acp/acp-terminal-connection.js';
import { AcpTerminalService } from '../../src/acp/acp-terminal-service.js';
import { AjvSchemaValidator } from '../../src/adapters/ajv-schema-validator.js';
import { AcpSchema } from './support/acp-schema.js';
import { TestPeer } from './support/test-peer.js';

type Json = Record<string, unknown>;

/** Refuses any command that mentions `rm`; allows everything else. */
class NoRmGate implements Gate {
  decide(request: GateRequest): GateDecision {
    const line = [request.spec.command, ...(request.spec.args ?? [])].join(' ');
    return request.verb === 'create' && /\brm\b/.test(line)
      ? { allow: false, reason: 'denied: rm is not allowed here', ruleIds: ['no-rm'] }
      : { allow: true };
  }
}

const schema = new AcpSchema();
let host: ProcessTerminalHost;
let service: AcpTerminalService;
let agent: TestPeer;

function result(response: Json): Json {
  if ('error' in response) throw new Error(`unexpected error ${JSON.stringify(response.error)}`);
  return response.result as Json;
}

function error(response: Json): { code: number; message: string; data?: Json } {
  if (!('error' in response)) throw new Error(`expected an error, got ${JSON.stringify(response)}`);
  return response.error as { code: number; message: string; data?: Json };
}

async function create(params: Json): Promise<string> {
  const answer = result(await agent.request('terminal/create', params));
  expect(schema.errors('CreateTerminalResponse', answer)).toEqual([]);
  return answer.terminalId as string;
}

beforeEach(() => {
  host = new ProcessTerminalHost({
    gate: new NoRmGate(),
    observer: new NoopTerminalObserver(),
    spawner: new CrossSpawnProcessSpawner(),
    killGraceMs: 500,
  });
  service = new AcpTerminalService(host, new AjvSchemaValidator(), { clientName: 'test-agent' });
  agent = new TestPeer();
  new AcpTerminalConnection(agent.channel, service);
});

afterEach(async () => {
  await host.closeAll();
});

describe('ACP terminal methods over a channel, on a real ProcessTerminalHost', () => {
  test('create → output → wait_for_exit → kill → release, every result valid against ACP v1', async () => {
    const terminalId = await create({
      sessionId: 's1',
      command: 'printf "$GREETING"',
      env: [
        { name: 'GREETING', value: 'first' },
        { name: 'GREETING', value: 'hello' },
      ],
      cwd: tmpdir(),
    });
    const exit = result(await agent.request('terminal/wait_for_exit', { sessionId: 's1', terminalId }));
    expect(schema.errors('WaitForTerminalExitResponse', exit)).toEqual([]);
    expect(exit).toEqual({ exitCode: 0, signal: null });

    const output = result(await agent.request('terminal/output', { sessionId: 's1', terminalId }));
    expect(schema.errors('TerminalOutputResponse', output)).toEqual([]);
    // Duplicate env names: the last pair wins.
    expect(output).toEqual({ output: 'hello', truncated: false, exitStatus: { exitCode: 0, signal: null } });

    const killed = result(await agent.request('terminal/kill', { sessionId: 's1', terminalId }));
    expect(schema.errors('KillTerminalResponse', killed)).toEqual([]);
    expect(killed).toEqual({});
    const released = result(await agent.request('terminal/release', { sessionId: 's1', terminalId }));
    expect(schema.errors('ReleaseTerminalResponse', released)).toEqual([]);
    expect(released).toEqual({});
  });

  test('output of a running command has no exitStatus; kill keeps the terminal readable', async () => {
    const terminalId = await create({
      sessionId: 's1',
      command: 'sh',
      args: ['-c', 'echo started; exec sleep 30'],
    });
    let output: Json;
    for (;;) {
      output = result(await agent.request('terminal/output', { sessionId: 's1', terminalId }));
      if (output.output !== '') break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(output).toEqual({ output: 'started\n', truncated: false });
    expect(schema.errors('TerminalOutputResponse', output)).toEqual([]);

    expect(result(await agent.request('terminal/kill', { sessionId: 's1', terminalId }))).toEqual({});
    const exit = result(await agent.request('terminal/wait_for_exit', { sessionId: 's1', terminalId }));
    expect(exit).toEqual({ exitCode: null, signal: 'SIGTERM' });
    const final = result(await agent.request('terminal/output', { sessionId: 's1', terminalId }));
    expect(final).toEqual({
      output: 'started\n',
      truncated: false,
      exitStatus: { exitCode: null, signal: 'SIGTERM' },
    });
    expect(schema.errors('TerminalOutputResponse', final)).toEqual([]);
  });

  test('outputByteLimit keeps the tail, cut at a character boundary', async () => {
    const terminalId = await create({
      sessionId: 's1',
      command: 'printf',
      args: ['héllo wörld\\n'],
      outputByteLimit: 8,
    });
    await agent.request('terminal/wait_for_exit', { sessionId: 's1', terminalId });
    const output = result(await agent.request('terminal/output', { sessionId: 's1', terminalId }));
    expect(output.output).toBe(' wörld\n');
    expect(Buffer.byteLength(output.output as string)).toBeLessThanOrEqual(8);
    expect(output.truncated).toBe(true);
  });

  test('unknown and released terminals are -32002 with data.terminalId', async () => {
    const unknown = error(await agent.request('terminal/output', { sessionId: 's1', terminalId: 'nope' }));
    expect(unknown.code).toBe(AcpErrorCode.ResourceNotFound);
    expect(unknown.data).toEqual({ terminalId: 'nope' });

    const terminalId = await create({ sessionId: 's1', command: 'true' });
    await agent.request('terminal/release', { sessionId: 's1', terminalId });
    for (const method of ['terminal/output', 'terminal/wait_for_exit', 'terminal/kill', 'terminal/release']) {
      const released = error(await agent.request(method, { sessionId: 's1', terminalId }));
      expect(released.code).toBe(-32002);
      expect(released.data).toEqual({ terminalId });
    }
  });

  test('malformed params are -32602', async () => {
    const cases: Json[] = [
      { sessionId: 's1' },
      { sessionId: 's1', command: 'true', env: { A: 'b' } },
      { sessionId: 's1', command: 'true', env: [{ name: 'A' }] },
      { sessionId: 's1', command: 'true', args: [1] },
      { sessionId: 's1', command: 'true', cwd: 'relative/dir' },
      { sessionId: 's1', command: 'true', outputByteLimit: -1 },
      { sessionId: 's1', command: 'true', outputByteLimit: 1.5 },
      { command: 'true' },
    ];
    for (const params of cases) {
      expect(error(await agent.request('terminal/create', params)).code).toBe(-32602);
    }
    expect(error(await agent.request('terminal/output', { sessionId: 's1' })).code).toBe(-32602);
    expect(error(await agent.request('terminal/kill')).code).toBe(-32602);
  });

  test('null args, env, cwd and outputByteLimit mean their defaults', async () => {
    const terminalId = await create({
      sessionId: 's1',
      command: 'echo ok',
      args: null,
      env: null,
      cwd: null,
      outputByteLimit: null,
    });
    await agent.request('terminal/wait_for_exit', { sessionId: 's1', terminalId });
    expect(result(await agent.request('terminal/output', { sessionId: 's1', terminalId })).output).toBe(
      'ok\n',
    );
  });

  test('$/cancel_request stops a wait with -32800; the command keeps running', async () => {
    const terminalId = await create({ sessionId: 's1', command: 'sleep', args: ['30'] });
    const id = agent.start('terminal/wait_for_exit', { sessionId: 's1', terminalId });
    // The wait is pending once the host has it; output proves the terminal is live meanwhile.
    await agent.request('terminal/output', { sessionId: 's1', terminalId });
    agent.send({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: id } });
    const cancelled = error(await agent.response(id));
    expect(cancelled.code).toBe(AcpErrorCode.RequestCancelled);
    const output = result(await agent.request('terminal/output', { sessionId: 's1', terminalId }));
    expect(output).not.toHaveProperty('exitStatus');
  });

  test('terminals are scoped per session', async () => {
    const a = await create({ sessionId: 'A', command: 'sleep', args: ['30'] });
    const b = await create({ sessionId: 'B', command: 'sleep', args: ['30'] });
    const crossed = error(await agent.request('terminal/kill', { sessionId: 'B', terminalId: a }));
    expect(crossed.code).toBe(-32002);
    expect(crossed.data).toEqual({ terminalId: a });

    await service.closeSession('A');
    expect(error(await agent.request('terminal/output', { sessionId: 'A', terminalId: a })).code).toBe(
      -32002,
    );
    const stillRunning = result(await agent.request('terminal/output', { sessionId: 'B', terminalId: b }));
    expect(stillRunning).not.toHaveProperty('exitStatus');
  });

  test('a policy refusal is an error the agent can read: -32010 with reason and rules', async () => {
    const refused = error(
      await agent.request('terminal/create', { sessionId: 's1', command: 'rm -rf /tmp/nothing-here' }),
    );
    expect(refused.code).toBe(AcpErrorCode.PolicyDenied);
    // The policy words its reason as a verdict ("denied: …"); the refusal says "denied" once.
    expect(refused.message).toBe(
      'Denied by policy: rm is not allowed here (rules: no-rm). Nothing was run. Do not retry the same command; choose another approach or ask the user.',
    );
    expect(refused.data).toEqual({
      verb: 'create',
      reason: 'denied: rm is not allowed here',
      ruleIds: ['no-rm'],
    });
  });

  test('other requests are -32601; notifications are ignored', async () => {
    agent.send({ jsonrpc: '2.0', method: 'session/update', params: {} });
    expect(error(await agent.request('fs/read_text_file', { sessionId: 's1', path: '/x' })).code).toBe(
      -32601,
    );
  });
});
