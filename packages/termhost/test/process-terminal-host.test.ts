import { createHash } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive } from '../../../test-support/processes.js';
import { CrossSpawnProcessSpawner } from '../src/adapters/cross-spawn-process-spawner.js';
import { NON_INTERACTIVE_ENV } from '../src/environment.js';
import { TermhostError } from '../src/errors.js';
import type { GateDecision } from '../src/ports/gate.js';
import type { ProcessSpawner } from '../src/ports/process-spawner.js';
import {
  DEFAULT_SHELL_PREFIX,
  ProcessTerminalHost,
  type ProcessTerminalHostOptions,
} from '../src/process-terminal-host.js';
import { closeHosts, newHost } from './support/hosts.js';
import { tempDir, until } from './support/processes.js';
import { RecordingGate } from './support/recording-gate.js';
import { RecordingObserver } from './support/recording-observer.js';

afterEach(closeHosts);

const dir = tempDir();
afterAll(() => dir.cleanup());

/** Runs a command to its end and returns its output snapshot. */
async function run(
  command: string,
  options: { args?: string[]; env?: Record<string, string>; outputByteLimit?: number; cwd?: string } = {},
  host = newHost(),
) {
  const id = await host.create({ command, ...options });
  const exitStatus = await host.waitForExit(id);
  const output = await host.output(id);
  await host.release(id);
  return { ...output, exitStatus };
}

function envLines(output: string): Map<string, string> {
  const env = new Map<string, string>();
  for (const line of output.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) env.set(line.slice(0, eq), line.slice(eq + 1));
  }
  return env;
}

describe('ProcessTerminalHost: output', () => {
  it('merges stdout and stderr in arrival order', async () => {
    const { output } = await run(
      'printf a; sleep 0.1; printf b >&2; sleep 0.1; printf c; sleep 0.1; printf d >&2',
    );
    expect(output).toBe('abcd');
  });

  it('truncates from the head at a character boundary, with exact counters', async () => {
    // 'x' then 'é' (2 bytes) ×10 = 21 bytes; the newest 5 bytes begin inside an 'é'.
    const { output, truncated, totalBytes, droppedBytes } = await run('printf', {
      args: ['%s', `x${'é'.repeat(10)}`],
      outputByteLimit: 5,
    });
    expect(output).toBe('éé');
    expect(truncated).toBe(true);
    expect(totalBytes).toBe(21);
    expect(droppedBytes).toBe(17);
    expect(droppedBytes + Buffer.byteLength(output)).toBe(totalBytes);
  });

  it('cuts a four-byte character straddling the limit', async () => {
    const { output, totalBytes, droppedBytes } = await run('printf', {
      args: ['%s', '😀😀😀'],
      outputByteLimit: 6,
    });
    expect(output).toBe('😀');
    expect(totalBytes).toBe(12);
    expect(droppedBytes).toBe(8);
  });

  it('is not truncated when the output fits exactly', async () => {
    const result = await run('printf', { args: ['%s', 'héllo'], outputByteLimit: 6 });
    expect(result).toMatchObject({ output: 'héllo', truncated: false, totalBytes: 6, droppedBytes: 0 });
  });

  it('replaces invalid UTF-8 and counts binary bytes exactly', async () => {
    const { output, totalBytes, droppedBytes, truncated } = await run("printf '\\377\\376A\\200\\000B'");
    expect(output).toBe('\uFFFD\uFFFDA\uFFFD\u0000B');
    expect(totalBytes).toBe(6);
    expect(droppedBytes).toBe(0);
    expect(truncated).toBe(false);
  });

  it('keeps memory bounded for 200 MB of output and counts every byte', async () => {
    const { output, totalBytes, droppedBytes, truncated } = await run('head -c 200M /dev/zero');
    const limit = 1024 * 1024;
    expect(totalBytes).toBe(200 * 1024 * 1024);
    expect(output.length).toBe(limit);
    expect(droppedBytes).toBe(totalBytes - limit);
    expect(truncated).toBe(true);
  });

  it('clamps the requested limit to the host ceiling, which is also the default', async () => {
    const gate = new RecordingGate();
    const host = newHost({ maxOutputBytes: 10, gate });
    const clamped = await run('printf', { args: ['%s', 'abcdefghijklmnop'], outputByteLimit: 1000 }, host);
    expect(clamped.output).toBe('ghijklmnop');
    const defaulted = await run('printf', { args: ['%s', 'abcdefghijklmnop'] }, host);
    expect(defaulted.output).toBe('ghijklmnop');
    const smaller = await run('printf', { args: ['%s', 'abcdefghijklmnop'], outputByteLimit: 3 }, host);
    expect(smaller.output).toBe('nop');
    const creates = gate.requests.filter((r) => r.verb === 'create').map((r) => r.spec.outputByteLimit);
    expect(creates).toEqual([10, 10, 3]);
  });

  it('reads from a byte offset: only what was written since, with the offset it starts at', async () => {
    const host = newHost();
    const id = await host.create({ command: 'printf', args: ['%s', 'first|second'] });
    await host.waitForExit(id);
    const since = await host.output(id, {}, { fromByte: 6 });
    expect(since).toMatchObject({ output: 'second', offset: 6, totalBytes: 12, droppedBytes: 0 });
    expect(await host.output(id)).toMatchObject({ output: 'first|second', offset: 0 });
    await expect(host.output(id, {}, { fromByte: -1 })).rejects.toMatchObject({ code: 'INVALID_SPEC' });
    await expect(host.output(id, {}, { fromByte: 1.5 })).rejects.toMatchObject({ code: 'INVALID_SPEC' });
  });

  it('reads output while the command runs, without an exit status', async () => {
    const host = newHost();
    const id = await host.create({ command: 'echo started; sleep 30' });
    const snapshot = await until(async () => {
      const out = await host.output(id);
      return out.output === 'started\n' ? out : undefined;
    });
    expect(snapshot.exitStatus).toBeNull();
  });
});

describe('ProcessTerminalHost: exit status', () => {
  it('reports exit codes', async () => {
    expect((await run('exit 7')).exitStatus).toEqual({ exitCode: 7, signal: null, timedOut: false });
    expect((await run('true', { args: [] })).exitStatus).toEqual({
      exitCode: 0,
      signal: null,
      timedOut: false,
    });
  });

  it('reports the signal that ended the command', async () => {
    expect((await run('sh', { args: ['-c', 'kill -USR1 $$'] })).exitStatus).toEqual({
      exitCode: null,
      signal: 'SIGUSR1',
      timedOut: false,
    });
    expect((await run('kill -KILL $$')).exitStatus).toEqual({
      exitCode: null,
      signal: 'SIGKILL',
      timedOut: false,
    });
  });

  it('answers waitForExit at once, any number of times, after exit', async () => {
    const host = newHost();
    const id = await host.create({ command: 'exit 3' });
    const first = await host.waitForExit(id);
    const again = await Promise.all([host.waitForExit(id), host.waitForExit(id), host.waitForExit(id)]);
    expect(again).toEqual([first, first, first]);
    expect((await host.output(id)).exitStatus).toEqual(first);
  });

  it('counts as exited when a background job keeps the pipes open', async () => {
    const host = newHost();
    const id = await host.create({ command: 'sleep 30 & echo $!' });
    // …and says that something it started still runs.
    expect(await host.waitForExit(id)).toEqual({
      exitCode: 0,
      signal: null,
      timedOut: false,
      processesLeft: true,
    });
  });

  it('reports no processesLeft for a process that says nothing it started outlives it (diesWithLeader)', async () => {
    // The plain spawner's process, marked as a sandbox's is: the background job is then the
    // spawner's to end (a pid namespace would), not a process left behind.
    const plain = new CrossSpawnProcessSpawner();
    const spawner: ProcessSpawner = {
      async spawn(request) {
        const spawned = await plain.spawn(request);
        return {
          pid: spawned.pid,
          output: spawned.output,
          exited: spawned.exited,
          signalGroup: (signal) => spawned.signalGroup(signal),
          groupAlive: () => spawned.groupAlive(),
          diesWithLeader: true,
        };
      },
    };
    const host = newHost({ spawner });
    const id = await host.create({ command: 'sleep 30 & echo $!' });
    const status = await host.waitForExit(id);
    const [pid] = (await host.output(id)).output.split('\n').map(Number);
    expect(isAlive(pid!)).toBe(true);
    expect(status).toEqual({ exitCode: 0, signal: null, timedOut: false });
  });

  it('reports a command line naming an unknown command as exit code 127, not a create failure', async () => {
    const { exitStatus, output } = await run('no-such-command-for-termhost');
    expect(exitStatus.exitCode).toBe(127);
    expect(output).toContain('no-such-command-for-termhost');
  });
});

describe('ProcessTerminalHost: waiting', () => {
  it('stops waiting on abort, rejecting with an AbortError, and leaves the command running', async () => {
    const host = newHost();
    const id = await host.create({ command: 'sleep 30' });
    const controller = new AbortController();
    const wait = host.waitForExit(id, { signal: controller.signal });
    controller.abort();
    await expect(wait).rejects.toMatchObject({ name: 'AbortError' });
    expect((await host.output(id)).exitStatus).toBeNull();
    await expect(host.waitForExit(id, { signal: AbortSignal.abort() })).rejects.toMatchObject({
      name: 'AbortError',
    });
    await host.kill(id);
    expect((await host.waitForExit(id)).signal).toBe('SIGTERM');
  });

  it('delivers every byte written after subscribing to onOutput, exactly once and in order', async () => {
    const host = newHost();
    const marker = join(dir.path, 'go');
    // 2000 lines of 501 bytes, written only once the wait subscribed (the marker exists).
    const id = await host.create({
      command: `while [ ! -e '${marker}' ]; do sleep 0.01; done; for i in $(seq 1 2000); do printf '%0500d\\n' $i; done`,
      outputByteLimit: 2_000_000,
    });
    const chunks: Buffer[] = [];
    const totals: number[] = [];
    const wait = host.waitForExit(id, {
      onOutput: (chunk, total) => {
        chunks.push(Buffer.from(chunk));
        totals.push(total);
      },
    });
    writeFileSync(marker, '');
    await wait;
    const seen = Buffer.concat(chunks);
    const { output, totalBytes } = await host.output(id);
    expect(seen.length).toBe(1_002_000);
    expect(seen.toString('utf8')).toBe(output);
    expect(totals.at(-1)).toBe(totalBytes);
    let sum = 0;
    chunks.forEach((chunk, i) => {
      sum += chunk.length;
      expect(totals[i]).toBe(sum);
    });
  });

  it('unsubscribes onOutput when the wait ends', async () => {
    const host = newHost();
    const id = await host.create({ command: 'echo one; sleep 0.3; echo two; sleep 30' });
    const seen: string[] = [];
    const controller = new AbortController();
    const wait = host.waitForExit(id, {
      signal: controller.signal,
      onOutput: (chunk) => {
        seen.push(Buffer.from(chunk).toString());
        controller.abort();
      },
    });
    await expect(wait).rejects.toMatchObject({ name: 'AbortError' });
    await until(async () => (await host.output(id)).output === 'one\ntwo\n');
    expect(seen).toEqual(['one\n']);
  });

  it('reports a throwing onOutput listener through onError and keeps going', async () => {
    const errors: string[] = [];
    const host = newHost({ onError: (_error, context) => errors.push(context) });
    const id = await host.create({ command: 'sleep 0.2; echo x' });
    const status = await host.waitForExit(id, {
      onOutput: () => {
        throw new Error('listener bug');
      },
    });
    expect(status.exitCode).toBe(0);
    expect(errors).toEqual([expect.stringContaining('onOutput')]);
  });
});

describe('ProcessTerminalHost: environment and stdin', () => {
  it('sets the non-interactive defaults over the inherited environment', async () => {
    const host = newHost({ inheritEnv: { PATH: process.env.PATH, PAGER: 'less', KEEP: 'kept' } });
    const env = envLines((await run('env', { args: [] }, host)).output);
    for (const [name, value] of Object.entries(NON_INTERACTIVE_ENV)) expect(env.get(name)).toBe(value);
    expect(env.get('KEEP')).toBe('kept');
    expect(env.has('HOME')).toBe(false);
  });

  it("lets the request's env override the defaults", async () => {
    const env = envLines((await run('env', { args: [], env: { PAGER: 'more', EXTRA: 'x=y' } })).output);
    expect(env.get('PAGER')).toBe('more');
    expect(env.get('EXTRA')).toBe('x=y');
  });

  it('runs command lines without BASH_ENV, ENV or exported functions, even when set', async () => {
    const marker = join(dir.path, 'bash-env-ran');
    const startup = join(dir.path, 'startup.sh');
    writeFileSync(startup, `touch '${marker}'\n`);
    const host = newHost({
      inheritEnv: { ...process.env, BASH_ENV: startup, 'BASH_FUNC_echo%%': '() { builtin echo pwned; }' },
    });
    // A request cannot even name an exported function: it is not a POSIX name.
    await expect(
      host.create({ command: 'echo hi', env: { 'BASH_FUNC_echo%%': '() { builtin echo pwned; }' } }),
    ).rejects.toMatchObject({ code: 'INVALID_SPEC' });
    const { output } = await run(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion
      'echo "${BASH_ENV-unset} ${ENV-unset}"; echo hi',
      {
        env: {
          BASH_ENV: startup,
          ENV: startup,
          SHELLOPTS: 'xtrace',
        },
      },
      host,
    );
    // No startup file ran, no trace lines, no function shadowed echo.
    expect(output).toBe('unset unset\nhi\n');
    expect(existsSync(marker)).toBe(false);
  });

  it('passes BASH_ENV to argv commands as set', async () => {
    const env = envLines((await run('env', { args: [], env: { BASH_ENV: '/dev/null' } })).output);
    expect(env.get('BASH_ENV')).toBe('/dev/null');
  });

  it('gives commands /dev/null as stdin and no controlling terminal', async () => {
    const { output, exitStatus } = await run(
      'read x; echo "read=$?"; cat; echo "cat=$?"; (exec 3</dev/tty) 2>/dev/null; echo "tty=$?"',
    );
    expect(output).toBe('read=1\ncat=0\ntty=1\n');
    expect(exitStatus.exitCode).toBe(0);
  });
});

describe('ProcessTerminalHost: create', () => {
  it('mints unguessable ids, never pids', async () => {
    const observer = new RecordingObserver();
    const host = newHost({ observer });
    const a = await host.create({ command: 'true' });
    const b = await host.create({ command: 'true' });
    expect(a).not.toBe(b);
    expect(a).toMatch(/^[0-9a-f-]{36}$/);
    const pids = observer.events.flatMap((e) => (e.type === 'spawned' ? [String(e.event.pid)] : []));
    expect(pids).not.toContain(a);
  });

  it('resolves the spec the gate judges: shell argv for lines, argv as given otherwise, absolute cwd', async () => {
    const gate = new RecordingGate();
    const host = newHost({ gate, cwd: dir.path, timeoutMs: 60_000 });
    await host.create({ command: 'echo $HOME', env: { A: 'b' }, cwd: 'sub/..' });
    await host.create({ command: 'ls', args: ['-l', 'x y'], timeoutMs: 99_000_000 });
    const [line, argv] = gate.requests.map((r) => r.spec);
    expect(line).toEqual({
      command: 'echo $HOME',
      args: null,
      cwd: dir.path,
      env: { A: 'b' },
      outputByteLimit: 1024 * 1024,
      argv: [...DEFAULT_SHELL_PREFIX, 'echo $HOME'],
      timeoutMs: 60_000,
    });
    expect(argv).toMatchObject({
      args: ['-l', 'x y'],
      argv: ['ls', '-l', 'x y'],
      env: {},
      timeoutMs: 60_000,
    });
  });

  it('resolves a relative cwd against the host cwd', async () => {
    const host = newHost({ cwd: '/' });
    expect((await run('pwd', { cwd: 'tmp' }, host)).output).toBe('/tmp\n');
  });

  it.each([
    ['CWD_NOT_FOUND', () => join(dir.path, 'missing')],
    ['CWD_NOT_DIRECTORY', () => import.meta.filename],
  ])('rejects a bad cwd with %s', async (code, cwd) => {
    const observer = new RecordingObserver();
    const host = newHost({ observer });
    const error = await host.create({ command: 'true', cwd: cwd() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TermhostError);
    expect(error).toMatchObject({ code, message: expect.stringContaining(cwd()) });
    expect(observer.events).toEqual([]);
  });

  it('rejects a missing program with PROGRAM_NOT_FOUND naming it', async () => {
    const host = newHost();
    await expect(host.create({ command: 'no-such-program-for-termhost', args: [] })).rejects.toMatchObject({
      code: 'PROGRAM_NOT_FOUND',
      message: expect.stringContaining('no-such-program-for-termhost'),
    });
    const noShell = newHost({ shellPrefix: ['/no/such/bash', '-c'] });
    await expect(noShell.create({ command: 'true' })).rejects.toMatchObject({
      code: 'PROGRAM_NOT_FOUND',
      message: expect.stringContaining('/no/such/bash'),
    });
  });

  it('rejects a non-executable file with PERMISSION_DENIED', async () => {
    const file = join(dir.path, 'script.sh');
    writeFileSync(file, 'echo hi\n', { mode: 0o644 });
    await expect(newHost().create({ command: file, args: [] })).rejects.toMatchObject({
      code: 'PERMISSION_DENIED',
      message: expect.stringContaining(file),
    });
  });

  it.each([
    ['an empty command', { command: '' }],
    ['a negative limit', { command: 'true', outputByteLimit: -1 }],
    ['a fractional limit', { command: 'true', outputByteLimit: 1.5 }],
    ['a NUL in an argument', { command: 'echo', args: ['a\0b'] }],
    ['a non-string env value', { command: 'true', env: { A: 1 as unknown as string } }],
    ['an env name with =', { command: 'true', env: { 'A=B': 'c' } }],
    ['a zero timeout', { command: 'true', timeoutMs: 0 }],
  ])('rejects %s with INVALID_SPEC before consulting the gate', async (_label, spec) => {
    const gate = new RecordingGate();
    await expect(newHost({ gate }).create(spec)).rejects.toMatchObject({ code: 'INVALID_SPEC' });
    expect(gate.requests).toEqual([]);
  });
});

describe('ProcessTerminalHost: gate', () => {
  it.each(['gate', 'observer', 'spawner'] as const)(
    'has no default %s: constructing without one throws',
    (missing) => {
      const ports: Record<string, unknown> = {
        gate: new RecordingGate(),
        observer: new RecordingObserver(),
        spawner: { spawn: () => Promise.reject(new Error('not used')) },
      };
      for (const absent of [undefined, null, {}]) {
        const options = { ...ports, [missing]: absent } as unknown as ProcessTerminalHostOptions;
        expect(() => new ProcessTerminalHost(options)).toThrow(
          new TypeError(`${missing} is required: the terminal host has no default ${missing}`),
        );
      }
      expect(() => new ProcessTerminalHost(ports as unknown as ProcessTerminalHostOptions)).not.toThrow();
    },
  );

  const refusal: GateDecision = { allow: false, reason: 'not on my watch', ruleIds: ['r1', 'r2'] };

  it.each([
    ['a refusal', () => refusal],
    [
      'a throw',
      () => {
        throw new Error('gate crashed');
      },
    ],
    ['a rejection', () => Promise.reject(new Error('gate crashed'))],
    ['junk', () => ({ allow: 'yes' }) as unknown as GateDecision],
  ])('spawns nothing on %s', async (_label, policy) => {
    const marker = join(dir.path, `gate-marker-${Math.random()}`);
    const observer = new RecordingObserver();
    const host = newHost({ gate: new RecordingGate(policy), observer });
    // Both forms: a command line (run by the shell) and a program with its args.
    for (const spec of [{ command: `touch '${marker}'` }, { command: 'touch', args: [marker] }]) {
      const error = await host.create(spec).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'GATE_DENIED' });
    }
    // Give a (wrongly) spawned command ample time to create the marker.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(existsSync(marker)).toBe(false);
    expect(observer.events).toEqual([]);
  });

  it('refuses env names that are not POSIX names before the gate is asked', async () => {
    const gate = new RecordingGate();
    const host = newHost({ gate });
    for (const name of ['LC_A\nLD_PRELOAD', 'LC_$X', 'LC_;id', 'LC_\u0007', '1LC', 'LC-A', '']) {
      await expect(host.create({ command: 'true', env: { [name]: 'x' } })).rejects.toMatchObject({
        code: 'INVALID_SPEC',
        message: expect.stringContaining(`${JSON.stringify(name)} is not a valid variable name`),
      });
    }
    expect(gate.requests).toEqual([]);
    const { output } = await run('printf %s "$LC_OK_1"', { env: { LC_OK_1: 'fine' } }, host);
    expect(output).toBe('fine');
  });

  it('carries the reason and rule ids of a refusal', async () => {
    const host = newHost({ gate: new RecordingGate(() => refusal) });
    await expect(host.create({ command: 'true' })).rejects.toMatchObject({
      code: 'GATE_DENIED',
      message: expect.stringContaining('not on my watch'),
      details: { reason: 'not on my watch', ruleIds: ['r1', 'r2'] },
    });
  });

  it('is consulted for every verb with the terminal id, the resolved spec and the caller', async () => {
    const gate = new RecordingGate();
    const host = newHost({ gate });
    const caller = { scope: 's', clientName: 'test' };
    const id = await host.create({ command: 'sleep 30' }, caller);
    await host.output(id, caller);
    await host.kill(id, caller);
    await host.waitForExit(id, {}, caller);
    await host.release(id, caller);
    expect(gate.verbs()).toEqual(['create', 'output', 'kill', 'wait', 'release']);
    const spec = gate.requests[0]!.spec;
    for (const request of gate.requests)
      expect(request).toEqual({ verb: request.verb, terminalId: id, spec, caller });
  });

  it('refuses a verb without effect', async () => {
    const denied = new Set<string>(['kill', 'release', 'output', 'wait']);
    const host = newHost({
      gate: new RecordingGate((r) => (denied.has(r.verb) ? refusal : { allow: true })),
    });
    const id = await host.create({ command: 'echo alive; sleep 30' });
    for (const call of [
      () => host.kill(id),
      () => host.release(id),
      () => host.output(id),
      () => host.waitForExit(id),
    ]) {
      await expect(call()).rejects.toMatchObject({ code: 'GATE_DENIED' });
    }
    denied.clear();
    expect((await host.output(id)).exitStatus).toBeNull();
    await host.kill(id);
    expect((await host.waitForExit(id)).signal).toBe('SIGTERM');
  });

  it('spawns in the directory the gate resolved', async () => {
    const gate = new RecordingGate(() => ({ allow: true, cwd: dir.path }));
    const host = newHost({ gate, cwd: '/' });
    const id = await host.create({ command: 'pwd' });
    await host.waitForExit(id);
    expect((await host.output(id)).output).toBe(`${dir.path}\n`);
    // Later verbs are judged against the spec as spawned.
    expect(gate.requests.at(-1)!.spec.cwd).toBe(dir.path);
  });

  it('looks the id up before consulting the gate', async () => {
    const gate = new RecordingGate();
    await expect(newHost({ gate }).output('nope')).rejects.toMatchObject({ code: 'TERMINAL_NOT_FOUND' });
    expect(gate.requests).toEqual([]);
  });
});

describe('ProcessTerminalHost: observer', () => {
  it('reports spawn and exit with counters and, when enabled, the output digest', async () => {
    const observer = new RecordingObserver();
    const host = newHost({ observer, digestOutput: true, maxOutputBytes: 4 });
    const caller = { clientName: 'c' };
    const id = await host.create({ command: 'printf hello-world' }, caller);
    await host.waitForExit(id);
    expect(observer.events.map((e) => e.type)).toEqual(['spawned', 'exited']);
    expect(observer.events[0]!.event).toEqual({ terminalId: id, pid: expect.any(Number), caller });
    expect(observer.exited(id)).toEqual({
      terminalId: id,
      caller,
      exitStatus: { exitCode: 0, signal: null, timedOut: false },
      durationMs: expect.any(Number),
      totalBytes: 11,
      droppedBytes: 7,
      outputSha256: createHash('sha256').update('hello-world').digest('hex'),
    });
  });

  it('reports no digest when digests are off', async () => {
    const observer = new RecordingObserver();
    const host = newHost({ observer });
    const id = await host.create({ command: 'echo x' });
    await host.waitForExit(id);
    expect(observer.exited(id)?.outputSha256).toBeNull();
  });

  it('survives a throwing observer and reports it through onError', async () => {
    const errors: string[] = [];
    const host = newHost({
      onError: (_error, context) => errors.push(context),
      observer: {
        onSpawned: () => {
          throw new Error('observer bug');
        },
        onExited: () => {
          throw new Error('observer bug');
        },
      },
    });
    const id = await host.create({ command: 'exit 4' });
    expect((await host.waitForExit(id)).exitCode).toBe(4);
    expect(errors).toEqual(['TerminalObserver.onSpawned', 'TerminalObserver.onExited']);
  });
});

describe('ProcessTerminalHost: scopes and ids', () => {
  it('hides a terminal from callers of another scope', async () => {
    const host = newHost();
    const id = await host.create({ command: 'sleep 30' }, { scope: 'a' });
    for (const caller of [{ scope: 'b' }, {}]) {
      await expect(host.output(id, caller)).rejects.toMatchObject({ code: 'TERMINAL_NOT_FOUND' });
      await expect(host.waitForExit(id, {}, caller)).rejects.toMatchObject({ code: 'TERMINAL_NOT_FOUND' });
      await expect(host.kill(id, caller)).rejects.toMatchObject({ code: 'TERMINAL_NOT_FOUND' });
      await expect(host.release(id, caller)).rejects.toMatchObject({ code: 'TERMINAL_NOT_FOUND' });
    }
    expect((await host.output(id, { scope: 'a' })).exitStatus).toBeNull();
  });

  it('rejects unknown ids', async () => {
    await expect(newHost().output('00000000-0000-0000-0000-000000000000')).rejects.toMatchObject({
      code: 'TERMINAL_NOT_FOUND',
    });
  });
});
