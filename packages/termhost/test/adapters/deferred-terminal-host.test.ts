import { AllowAllGate, NoopTerminalObserver } from '../../../../test-support/terminal-doubles.js';
import { CrossSpawnProcessSpawner } from '../../src/adapters/cross-spawn-process-spawner.js';
import { DeferredTerminalHost } from '../../src/adapters/deferred-terminal-host.js';
import { TermhostError } from '../../src/errors.js';
import { ProcessTerminalHost } from '../../src/process-terminal-host.js';

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('DeferredTerminalHost', () => {
  it('holds calls until the real host is ready, then runs them on it', async () => {
    const ready = deferred<ProcessTerminalHost>();
    const host = new DeferredTerminalHost(ready.promise);
    let created: string | null = null;
    const creating = host.create({ command: 'printf', args: ['ready'] }).then((id) => {
      created = id;
      return id;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(created).toBeNull();
    const real = new ProcessTerminalHost({
      gate: new AllowAllGate(),
      observer: new NoopTerminalObserver(),
      spawner: new CrossSpawnProcessSpawner(),
    });
    ready.resolve(real);
    const id = await creating;
    expect(await host.waitForExit(id)).toEqual({ exitCode: 0, signal: null, timedOut: false });
    expect((await real.output(id)).output).toBe('ready');
    await host.release(id);
    await expect(real.output(id)).rejects.toMatchObject({ code: 'TERMINAL_NOT_FOUND' });
    await host.closeAll();
  });

  it('rejects pending and later calls with HOST_CLOSED naming the cause when the real host fails to start', async () => {
    const ready = deferred<ProcessTerminalHost>();
    const host = new DeferredTerminalHost(ready.promise);
    const pending = host.create({ command: 'true' });
    ready.reject(new Error('policy.yaml:3:1: default: must be allow or deny'));
    await expect(pending).rejects.toBeInstanceOf(TermhostError);
    await expect(pending).rejects.toMatchObject({
      code: 'HOST_CLOSED',
      message: expect.stringContaining('policy.yaml:3:1'),
    });
    await expect(host.output('any')).rejects.toMatchObject({ code: 'HOST_CLOSED' });
    await expect(host.closeAll()).resolves.toBeUndefined();
  });
});
