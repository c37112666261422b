import { closeHosts, newHost } from './support/hosts.js';
import { childPids, openFdCount } from './support/processes.js';

afterEach(closeHosts);

describe('ProcessTerminalHost: resource leaks', () => {
  it('is back to its baseline of descriptors and child processes after 1000 create/wait/release cycles', async () => {
    const host = newHost();
    const cycle = async (i: number): Promise<void> => {
      const id = await host.create({ command: 'true', args: [] });
      await host.waitForExit(id);
      await host.release(id);
      // Failed spawns must not leak either.
      if (i % 50 === 0)
        await host.create({ command: 'no-such-program-for-termhost', args: [] }).catch(() => {});
    };
    // Warm up: libuv opens its signal pipe and thread pool lazily on first use.
    for (let i = 0; i < 20; i++) await cycle(i);
    const fds = openFdCount();
    const children = childPids().length;

    for (let i = 0; i < 1000; i++) await cycle(i);

    expect(openFdCount()).toBe(fds);
    expect(childPids()).toHaveLength(children);
    // 1020 spawns: about 5 s on an idle machine, 25 s at a load average of 13.
  }, 180_000);
});
