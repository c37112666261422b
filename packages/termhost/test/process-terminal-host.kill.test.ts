import { setTimeout as delay } from 'node:timers/promises';
import { isAlive } from '../../../test-support/processes.js';
import { CrossSpawnProcessSpawner } from '../src/adapters/cross-spawn-process-spawner.js';
import type { ProcessSpawner, SpawnedProcess, SpawnRequest } from '../src/ports/process-spawner.js';
import type { ProcessTerminalHost } from '../src/process-terminal-host.js';
import { closeHosts, linesPrinted, newHost } from './support/hosts.js';
import { until } from './support/processes.js';
import { RecordingGate } from './support/recording-gate.js';
import { RecordingObserver } from './support/recording-observer.js';

afterEach(closeHosts);

/** A command line that starts two background sleeps, prints their pids and waits for them. */
const TREE = 'sleep 1000 & echo $!; sleep 1000 & echo $!; wait';

describe('ProcessTerminalHost: kill', () => {
  it('kills the whole process tree with SIGTERM', async () => {
    const host = newHost();
    const id = await host.create({ command: TREE });
    const pids = (await linesPrinted(host, id, 2)).map(Number);
    expect(pids.every(isAlive)).toBe(true);
    await host.kill(id);
    expect(await host.waitForExit(id)).toEqual({ exitCode: null, signal: 'SIGTERM', timedOut: false });
    await until(() => !pids.some(isAlive));
  });

  it('kills grandchildren of a nested shell', async () => {
    const host = newHost();
    const id = await host.create({ command: 'sh', args: ['-c', "sh -c 'sleep 1000 & echo $!; sleep 1000'"] });
    const [pid] = (await linesPrinted(host, id, 1)).map(Number);
    await host.kill(id);
    await host.waitForExit(id);
    await until(() => !isAlive(pid!));
  });

  it('SIGKILLs a child that ignores SIGTERM once the grace passed', async () => {
    const host = newHost({ killGraceMs: 200 });
    const id = await host.create({ command: "trap '' TERM; sleep 1000 & echo $!; wait" });
    const [pid] = (await linesPrinted(host, id, 1)).map(Number);
    await host.kill(id);
    expect(await host.waitForExit(id)).toEqual({ exitCode: null, signal: 'SIGKILL', timedOut: false });
    await until(() => !isAlive(pid!));
  });

  it('is idempotent and harmless after exit; the terminal stays readable and waitable', async () => {
    const host = newHost();
    const id = await host.create({ command: 'echo done' });
    const status = await host.waitForExit(id);
    await host.kill(id);
    await host.kill(id);
    expect(await host.waitForExit(id)).toEqual(status);
    expect((await host.output(id)).output).toBe('done\n');

    const running = await host.create({ command: 'sleep 1000' });
    await Promise.all([host.kill(running), host.kill(running), host.kill(running)]);
    expect((await host.waitForExit(running)).signal).toBe('SIGTERM');
    expect((await host.output(running)).exitStatus?.signal).toBe('SIGTERM');
  });

  it.each([
    ['ends on SIGTERM', TREE, {}, 'SIGTERM'],
    [
      'ignores SIGTERM until SIGKILL',
      "trap '' TERM; sleep 1000 & echo $!; wait",
      { killGraceMs: 200 },
      'SIGKILL',
    ],
  ] as const)(
    'returns once a command that %s has exited: the next read shows the exit and no process is left',
    async (_label, command, options, signal) => {
      const host = newHost(options);
      const id = await host.create({ command });
      const pids = (await linesPrinted(host, id, 1)).map(Number);
      const kills = [host.kill(id), host.kill(id)];
      await Promise.all(kills);
      // No wait, no polling: the kill itself waited.
      expect((await host.output(id)).exitStatus).toEqual({ exitCode: null, signal, timedOut: false });
      expect(pids.filter(isAlive)).toEqual([]);
    },
  );

  it('returns only once the exit is seen, even when it is reported after the group is gone', async () => {
    // The leader's exit reaches the host 300 ms after the process is gone (a slow reaper, a loaded machine).
    const plain = new CrossSpawnProcessSpawner();
    const spawner: ProcessSpawner = {
      async spawn(request) {
        const spawned = await plain.spawn(request);
        return {
          pid: spawned.pid,
          output: spawned.output,
          exited: spawned.exited.then((exit) => delay(300, exit)),
          signalGroup: (signal) => spawned.signalGroup(signal),
          groupAlive: () => spawned.groupAlive(),
        };
      },
    };
    const host = newHost({ spawner });
    const id = await host.create({ command: 'sleep', args: ['1000'] });
    await host.kill(id);
    expect((await host.output(id)).exitStatus).toEqual({
      exitCode: null,
      signal: 'SIGTERM',
      timedOut: false,
    });
  });

  it('after the shell exited, returns once its background jobs are gone', async () => {
    const host = newHost();
    const id = await host.create({ command: 'sleep 1000 & echo $!' });
    const [pid] = (await linesPrinted(host, id, 1)).map(Number);
    await host.kill(id);
    expect((await host.output(id)).exitStatus).toMatchObject({ exitCode: 0 });
    expect(isAlive(pid!)).toBe(false);
  });

  it('still kills background jobs after their shell exited', async () => {
    const host = newHost();
    const id = await host.create({ command: 'sleep 1000 & echo $!' });
    const [pid] = (await linesPrinted(host, id, 1)).map(Number);
    expect((await host.waitForExit(id)).exitCode).toBe(0);
    expect(isAlive(pid!)).toBe(true);
    await host.kill(id);
    await until(() => !isAlive(pid!));
  });
});

describe('ProcessTerminalHost: timeouts', () => {
  it('kills the command after the host timeout and says so', async () => {
    const host = newHost({ timeoutMs: 200 });
    const id = await host.create({ command: TREE });
    const pids = (await linesPrinted(host, id, 2)).map(Number);
    expect(await host.waitForExit(id)).toEqual({ exitCode: null, signal: 'SIGTERM', timedOut: true });
    await until(() => !pids.some(isAlive));
  });

  it('honours a shorter per-request timeout and clamps a longer one', async () => {
    const gate = new RecordingGate();
    const host = newHost({ timeoutMs: 60_000, gate });
    const id = await host.create({ command: 'sleep 1000', timeoutMs: 100 });
    expect(await host.waitForExit(id)).toMatchObject({ timedOut: true });
    await host.create({ command: 'true', timeoutMs: 10_000_000 });
    const creates = gate.requests.filter((r) => r.verb === 'create');
    expect(creates.map((r) => r.spec.timeoutMs)).toEqual([100, 60_000]);
  });

  it('does not flag commands that end in time', async () => {
    const host = newHost({ timeoutMs: 30_000 });
    const id = await host.create({ command: 'exit 2' });
    expect(await host.waitForExit(id)).toEqual({ exitCode: 2, signal: null, timedOut: false });
  });

  it('escalates to SIGKILL on timeout too', async () => {
    const host = newHost({ timeoutMs: 100, killGraceMs: 100 });
    const id = await host.create({ command: "trap '' TERM; while :; do sleep 0.05; done" });
    expect(await host.waitForExit(id)).toEqual({ exitCode: null, signal: 'SIGKILL', timedOut: true });
  });
});

describe('ProcessTerminalHost: release', () => {
  it('a verb whose gate decision outlasted a release of its terminal finds no terminal', async () => {
    let allowOutput!: () => void;
    const outputAllowed = new Promise<void>((resolve) => (allowOutput = resolve));
    const gate = new RecordingGate(async (request) => {
      if (request.verb === 'output') await outputAllowed;
      return { allow: true };
    });
    const host = newHost({ gate });
    const id = await host.create({ command: 'echo', args: ['released'] });
    await host.waitForExit(id);
    const reading = host.output(id);
    await until(() => gate.verbs().includes('output'));
    await host.release(id);
    allowOutput();
    await expect(reading).rejects.toMatchObject({ code: 'TERMINAL_NOT_FOUND' });
  });

  it('kills the tree, waits for it, and forgets the id', async () => {
    const host = newHost();
    const id = await host.create({ command: TREE });
    const pids = (await linesPrinted(host, id, 2)).map(Number);
    await host.release(id);
    expect(pids.some(isAlive)).toBe(false);
    await expect(host.output(id)).rejects.toMatchObject({ code: 'TERMINAL_NOT_FOUND' });
    await expect(host.waitForExit(id)).rejects.toMatchObject({ code: 'TERMINAL_NOT_FOUND' });
    await expect(host.kill(id)).rejects.toMatchObject({ code: 'TERMINAL_NOT_FOUND' });
    await expect(host.release(id)).rejects.toMatchObject({ code: 'TERMINAL_NOT_FOUND' });
  });

  it('resolves pending waits with the exit status the release caused', async () => {
    const host = newHost();
    const id = await host.create({ command: 'sleep 1000' });
    const waits = [host.waitForExit(id), host.waitForExit(id, { onOutput: () => {} })];
    await host.release(id);
    expect(await Promise.all(waits)).toEqual([
      { exitCode: null, signal: 'SIGTERM', timedOut: false },
      { exitCode: null, signal: 'SIGTERM', timedOut: false },
    ]);
  });

  it('kills background jobs left behind by an exited shell', async () => {
    const host = newHost();
    const id = await host.create({ command: 'sleep 1000 & echo $!' });
    const [pid] = (await linesPrinted(host, id, 1)).map(Number);
    await host.waitForExit(id);
    await host.release(id);
    expect(isAlive(pid!)).toBe(false);
  });

  it('waits out the grace for a child that ignores SIGTERM', async () => {
    const host = newHost({ killGraceMs: 200 });
    const id = await host.create({ command: "trap '' TERM; sleep 1000 & echo $!; wait" });
    const [pid] = (await linesPrinted(host, id, 1)).map(Number);
    await host.release(id);
    expect(isAlive(pid!)).toBe(false);
  });
});

describe('ProcessTerminalHost: terminal limit', () => {
  it('refuses terminals beyond maxTerminals until one is released', async () => {
    const host = newHost({ maxTerminals: 2 });
    const a = await host.create({ command: 'sleep 1000' });
    const b = await host.create({ command: 'true' });
    await host.waitForExit(b);
    // An exited terminal still counts until it is released.
    await expect(host.create({ command: 'true' })).rejects.toMatchObject({ code: 'TERMINAL_LIMIT_REACHED' });
    await host.release(b);
    const c = await host.create({ command: 'true' });
    await expect(host.create({ command: 'true' })).rejects.toMatchObject({ code: 'TERMINAL_LIMIT_REACHED' });
    await host.release(a);
    await host.release(c);
  });

  it('counts concurrent creations', async () => {
    const host = newHost({ maxTerminals: 3 });
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, () => host.create({ command: 'sleep 1000' })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    expect(results.filter((r) => r.status === 'rejected')).toEqual(
      Array(3).fill(
        expect.objectContaining({ reason: expect.objectContaining({ code: 'TERMINAL_LIMIT_REACHED' }) }),
      ),
    );
  });

  it('does not count failed creations', async () => {
    const host = newHost({ maxTerminals: 1 });
    await expect(host.create({ command: 'no-such-program-for-termhost', args: [] })).rejects.toMatchObject({
      code: 'PROGRAM_NOT_FOUND',
    });
    await expect(host.create({ command: 'true', cwd: '/no/such/dir' })).rejects.toMatchObject({
      code: 'CWD_NOT_FOUND',
    });
    await host.create({ command: 'true' });
  });
});

describe('ProcessTerminalHost: reclaiming exited terminals (reclaimExited)', () => {
  it('releases the least recently used exited terminal to make room, never a running one', async () => {
    const host = newHost({ maxTerminals: 3, reclaimExited: true });
    const running = await host.create({ command: 'sleep 1000' });
    const older = await host.create({ command: 'echo older' });
    const newer = await host.create({ command: 'echo newer' });
    await host.waitForExit(newer);
    await host.waitForExit(older);
    // Reading `older` makes `newer` the least recently used exited terminal.
    expect((await host.output(older)).output).toBe('older\n');
    const fourth = await host.create({ command: 'echo fourth' });
    await expect(host.output(newer)).rejects.toMatchObject({ code: 'TERMINAL_NOT_FOUND' });
    expect((await host.output(older)).output).toBe('older\n');
    expect((await host.output(running)).exitStatus).toBeNull();
    await host.waitForExit(fourth);
    // `older` was read last before `fourth` was waited on: it goes next.
    await host.create({ command: 'true' });
    await expect(host.output(older)).rejects.toMatchObject({ code: 'TERMINAL_NOT_FOUND' });
    expect((await host.output(running)).exitStatus).toBeNull();
  });

  it('prefers an exited terminal whose process group is gone over one with background jobs', async () => {
    const host = newHost({ maxTerminals: 2, reclaimExited: true });
    const lingering = await host.create({ command: 'sleep 1000 & echo $!' });
    const [pid] = (await linesPrinted(host, lingering, 1)).map(Number);
    await host.waitForExit(lingering);
    const done = await host.create({ command: 'true' });
    await host.waitForExit(done);
    await host.output(done); // most recently used, but its group is gone
    await host.create({ command: 'true' });
    await expect(host.output(done)).rejects.toMatchObject({ code: 'TERMINAL_NOT_FOUND' });
    expect(isAlive(pid!)).toBe(true);
    expect((await host.output(lingering)).exitStatus).toMatchObject({ exitCode: 0 });
  });

  it('refuses only when every terminal still runs, and says so', async () => {
    const host = newHost({ maxTerminals: 2, reclaimExited: true });
    await host.create({ command: 'sleep 1000' });
    await host.create({ command: 'sleep 1000' });
    const refused = host.create({ command: 'true' });
    await expect(refused).rejects.toMatchObject({
      code: 'TERMINAL_LIMIT_REACHED',
      details: { maxTerminals: 2, running: 2, reclaimExited: true },
    });
    await expect(refused).rejects.toThrow(/none of them has exited .*reclaimed automatically/);
  });

  it('never reclaims a terminal of another scope', async () => {
    const host = newHost({ maxTerminals: 1, reclaimExited: true });
    const theirs = await host.create({ command: 'true' }, { scope: 'b' });
    await host.waitForExit(theirs, {}, { scope: 'b' });
    await expect(host.create({ command: 'true' }, { scope: 'a' })).rejects.toMatchObject({
      code: 'TERMINAL_LIMIT_REACHED',
    });
    expect((await host.output(theirs, { scope: 'b' })).exitStatus).toMatchObject({ exitCode: 0 });
  });

  it('many concurrent creations past the limit each reclaim a different exited terminal', async () => {
    const host = newHost({ maxTerminals: 4, reclaimExited: true });
    const first = await Promise.all(Array.from({ length: 4 }, () => host.create({ command: 'true' })));
    await Promise.all(first.map((id) => host.waitForExit(id)));
    const second = await Promise.all(Array.from({ length: 4 }, () => host.create({ command: 'echo x' })));
    expect(new Set(second).size).toBe(4);
    for (const id of first)
      await expect(host.output(id)).rejects.toMatchObject({ code: 'TERMINAL_NOT_FOUND' });
    for (const id of second) await host.waitForExit(id);
  });
});

describe('ProcessTerminalHost: closeAll', () => {
  it('kills and releases every terminal of a scope, leaving the others', async () => {
    const host = newHost();
    const mine = await host.create({ command: TREE }, { scope: 'a' });
    const minePids = (await linesPrinted(host, mine, 2, { scope: 'a' })).map(Number);
    const theirs = await host.create({ command: 'sleep 1000' }, { scope: 'b' });
    await host.closeAll('a');
    expect(minePids.some(isAlive)).toBe(false);
    await expect(host.output(mine, { scope: 'a' })).rejects.toMatchObject({ code: 'TERMINAL_NOT_FOUND' });
    expect((await host.output(theirs, { scope: 'b' })).exitStatus).toBeNull();
    // A scoped closeAll does not close the host.
    await host.create({ command: 'true' }, { scope: 'a' });
  });

  it('kills everything, then refuses new terminals', async () => {
    const gate = new RecordingGate();
    const host = newHost({ gate });
    const ids = await Promise.all([
      host.create({ command: TREE }),
      host.create({ command: TREE }, { scope: 'x' }),
      host.create({ command: "trap '' TERM; sleep 1000 & echo $!; echo $!; wait" }),
    ]);
    const pids = (
      await Promise.all(ids.map((id, i) => linesPrinted(host, id, 2, i === 1 ? { scope: 'x' } : {})))
    ).flatMap((lines) => lines.map(Number));
    const verbsBefore = gate.requests.length;
    await host.closeAll();
    expect(pids.some(isAlive)).toBe(false);
    // closeAll is shutdown: not gated.
    expect(gate.requests.length).toBe(verbsBefore);
    await expect(host.create({ command: 'true' })).rejects.toMatchObject({ code: 'HOST_CLOSED' });
    await host.closeAll();
  });

  it('waits for releases already under way', async () => {
    const host = newHost({ killGraceMs: 300 });
    const id = await host.create({ command: "trap '' TERM; sleep 1000 & echo $!; wait" });
    const [pid] = (await linesPrinted(host, id, 1)).map(Number);
    const releasing = host.release(id);
    await until(async () => (await host.output(id).catch(() => 'gone')) === 'gone');
    await host.closeAll();
    expect(isAlive(pid!)).toBe(false);
    await releasing;
  });

  it('tears down a terminal whose creation was under way', async () => {
    let letThrough: () => void = () => {};
    const gate = new RecordingGate(
      () =>
        new Promise((resolve) => {
          letThrough = () => resolve({ allow: true });
        }),
    );
    const host = newHost({ gate });
    const creation = host.create({ command: 'sleep 1000' });
    await until(() => gate.requests.length === 1);
    const closing = host.closeAll();
    letThrough();
    await expect(creation).rejects.toMatchObject({ code: 'HOST_CLOSED' });
    await closing;
  });

  it('answers a create whose command spawned while the host closed with its id, and kills it', async () => {
    // The real spawner; the host starts closing the moment the command runs.
    let host: ProcessTerminalHost | undefined;
    let closing: Promise<void> | undefined;
    let pid = 0;
    const spawner: ProcessSpawner = {
      async spawn(request: SpawnRequest): Promise<SpawnedProcess> {
        const child = await new CrossSpawnProcessSpawner().spawn(request);
        pid = child.pid;
        closing = host!.closeAll();
        return child;
      },
    };
    const observer = new RecordingObserver();
    host = newHost({ spawner, observer });
    const id = await host.create({ command: 'sleep 1000' });
    expect(typeof id).toBe('string');
    await closing;
    expect(isAlive(pid)).toBe(false);
    // It ran, and the host says so: a spawn and an exit by the shutdown's SIGTERM.
    expect(observer.events.map((e) => e.type)).toEqual(['spawned', 'exited']);
    expect(observer.exited(id)).toMatchObject({ exitStatus: { signal: 'SIGTERM' } });
  });
});
