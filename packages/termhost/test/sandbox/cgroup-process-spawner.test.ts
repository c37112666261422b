import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isAlive } from '../../../../test-support/processes.js';
import { CrossSpawnProcessSpawner } from '../../src/adapters/cross-spawn-process-spawner.js';
import { CgroupProcessSpawner, createTerminalCgroupRoot } from '../../src/sandbox/cgroup-process-spawner.js';
import { closeHosts, linesPrinted, newHost } from '../support/hosts.js';
import { until } from '../support/processes.js';

afterEach(closeHosts);

const AS_ROOT = process.getuid?.() === 0;
const LAUNCHER = { perl: '/usr/bin/perl', dropPtrace: AS_ROOT };

/** This process's cgroup v2 path, read now. */
const ownCgroup = (): string =>
  readFileSync('/proc/self/cgroup', 'utf8')
    .split('\n')
    .find((line) => line.startsWith('0::'))!
    .slice(3);

const root = createTerminalCgroupRoot();
// CI runs as root with a cgroup v2 mount: there this must run, never skip.
const withCgroups = root !== null || process.env.CI ? test : test.skip;

/** A host whose terminals' cgroups live in a fresh root of its own (returned as `cgroups`). */
function cgroupHost() {
  const cgroups = createTerminalCgroupRoot();
  if (cgroups === null) throw new Error('no writable cgroup v2 here (CI must provide one)');
  return Object.assign(
    newHost({ spawner: new CgroupProcessSpawner(new CrossSpawnProcessSpawner(), cgroups, LAUNCHER) }),
    {
      cgroups,
    },
  );
}

/** A process that leaves the terminal's session and process group, printing its pid. */
const ESCAPES = {
  'setsid -f': "setsid -f sh -c 'echo $$; exec sleep 1000'; sleep 1000",
  'a double fork into a new session': "(setsid sh -c 'echo $$; exec sleep 1000' &) ; sleep 1000",
};

describe('CgroupProcessSpawner', () => {
  for (const [name, command] of Object.entries(ESCAPES)) {
    withCgroups(`kill reaches a process that left the session (${name})`, async () => {
      const host = cgroupHost();
      const id = await host.create({ command });
      const [pid] = (await linesPrinted(host, id, 1)).map(Number);
      expect(isAlive(pid!)).toBe(true);
      await host.kill(id);
      await host.waitForExit(id);
      await until(() => !isAlive(pid!));
    });
  }

  withCgroups(
    'a leader that exits while a setsid child runs reports processesLeft; release ends the child',
    async () => {
      const host = cgroupHost();
      const id = await host.create({ command: "setsid sh -c 'echo $$; exec sleep 1000'" });
      const [pid] = (await linesPrinted(host, id, 1)).map(Number);
      expect(await host.waitForExit(id)).toEqual({
        exitCode: 0,
        signal: null,
        timedOut: false,
        processesLeft: true,
      });
      expect(isAlive(pid!)).toBe(true);
      await host.release(id);
      expect(isAlive(pid!)).toBe(false);
    },
  );

  withCgroups('closeAll ends escaped processes and removes every terminal cgroup', async () => {
    const host = cgroupHost();
    const id = await host.create({ command: ESCAPES['setsid -f'] });
    const [pid] = (await linesPrinted(host, id, 1)).map(Number);
    await host.closeAll();
    expect(isAlive(pid!)).toBe(false);
    expect(readdirSync(host.cgroups).filter((entry) => /^t-/.test(entry))).toEqual([]);
  });

  withCgroups(
    'removes a terminal’s cgroup when it is released, and stale roots of dead servers',
    async () => {
      const host = cgroupHost();
      const id = await host.create({ command: 'true', args: [] });
      await host.waitForExit(id);
      await host.release(id);
      expect(readdirSync(host.cgroups).filter((entry) => entry.startsWith('t-'))).toEqual([]);
      const parent = dirname(root!);
      const stale = join(parent, 'termgate-999999999-deadbeef'); // beyond pid_max: no such process
      mkdirSync(join(stale, 't-x'), { recursive: true });
      const another = createTerminalCgroupRoot();
      expect(existsSync(stale)).toBe(false);
      expect(another).not.toBeNull();
    },
  );

  withCgroups('still rejects a missing program with PROGRAM_NOT_FOUND', async () => {
    await expect(cgroupHost().create({ command: 'no-such-program-xyz', args: [] })).rejects.toMatchObject({
      code: 'PROGRAM_NOT_FOUND',
    });
  });

  // Before, this process wrote itself into the terminal's cgroup around a synchronous fork
  // (about 5 ms, blocking the event loop), and a wrapped spawner that forked later was refused.
  withCgroups(
    'the server never joins a terminal cgroup; the command joins its own, however late the fork',
    async () => {
      const seen: string[] = [];
      const late = {
        async spawn(request: Parameters<CrossSpawnProcessSpawner['spawn']>[0]) {
          seen.push(ownCgroup()); // where this process is when the wrapped spawner is called
          await new Promise((resolve) => setTimeout(resolve, 10));
          seen.push(ownCgroup());
          return new CrossSpawnProcessSpawner().spawn(request);
        },
      };
      const before = ownCgroup();
      const cgroups = createTerminalCgroupRoot()!;
      const host = newHost({ spawner: new CgroupProcessSpawner(late, cgroups, LAUNCHER) });
      const id = await host.create({ command: 'cat', args: ['/proc/self/cgroup'] });
      await host.waitForExit(id);
      const line = (await host.output(id)).output.split('\n').find((l) => l.startsWith('0::'));
      expect(seen).toEqual([before, before]);
      expect(ownCgroup()).toBe(before);
      const rel = line!.slice(3); // the command's cgroup below the mount: …/termgate-…/t-…
      expect(rel).toMatch(/\/t-[0-9a-f-]+$/);
      expect(cgroups.endsWith(dirname(rel))).toBe(true);
    },
  );

  (AS_ROOT ? withCgroups : test.skip)(
    'as root, the launcher drops CAP_SYS_PTRACE: the command cannot reopen the host’s pipes through /proc/$PPID/fd',
    async () => {
      const host = cgroupHost();
      const id = await host.create({
        command: 'grep CapBnd /proc/self/status; if exec 3<"/proc/$PPID/fd/0"; then echo read-opened; fi',
      });
      await host.waitForExit(id);
      const { output } = await host.output(id);
      const bounding = BigInt(`0x${/CapBnd:\s+([0-9a-f]+)/.exec(output)![1]}`);
      expect(bounding & (1n << 19n)).toBe(0n);
      expect(output).not.toContain('read-opened');
    },
  );
});
