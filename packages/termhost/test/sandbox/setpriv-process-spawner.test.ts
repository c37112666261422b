import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CrossSpawnProcessSpawner } from '../../src/adapters/cross-spawn-process-spawner.js';
import { findOnPath } from '../../src/sandbox/executable-check.js';
import { SetprivProcessSpawner } from '../../src/sandbox/setpriv-process-spawner.js';
import { closeHosts, newHost } from '../support/hosts.js';

afterEach(closeHosts);

const root = process.getuid?.() === 0;
const setpriv = findOnPath('setpriv', '/usr/bin:/bin:/usr/sbin:/sbin');
// CI runs as root with util-linux: there this must run, never skip.
const rootOnly = root || process.env.CI ? test : test.skip;

/**
 * A real OS pipe (a FIFO opened read-write) at a descriptor of this process,
 * standing in for the server's protocol pipes: a command reopens it through
 * /proc/$PPID/fd, as an attacking command would the server's stdin/stdout.
 */
function protocolPipe(): number {
  const fifo = join(mkdtempSync(join(tmpdir(), 'termgate-fifo-')), 'pipe');
  execFileSync('mkfifo', [fifo]);
  return openSync(fifo, 'r+');
}

const ATTACK =
  'if exec 3<"/proc/$PPID/fd/$FD"; then echo read-opened; fi; if exec 4>>"/proc/$PPID/fd/$FD"; then echo write-opened; fi';

async function attack(spawner: CrossSpawnProcessSpawner | SetprivProcessSpawner): Promise<string> {
  const fd = protocolPipe();
  try {
    const host = newHost({ spawner });
    const id = await host.create({ command: ATTACK, env: { FD: String(fd) } });
    await host.waitForExit(id);
    return (await host.output(id)).output;
  } finally {
    closeSync(fd);
  }
}

describe('SetprivProcessSpawner (as root)', () => {
  rootOnly('keeps a root command from reopening the host’s pipes through /proc/$PPID/fd', async () => {
    expect(root).toBe(true);
    expect(setpriv).not.toBeNull();
    // Without it, root reopens both: the attack is real.
    const open = await attack(new CrossSpawnProcessSpawner());
    expect(open).toContain('read-opened');
    expect(open).toContain('write-opened');
    const blocked = await attack(new SetprivProcessSpawner(new CrossSpawnProcessSpawner(), setpriv!));
    expect(blocked).not.toContain('opened');
    expect(blocked).toMatch(/Permission denied/);
  });

  rootOnly(
    'still rejects a missing program with PROGRAM_NOT_FOUND, and a non-executable one with PERMISSION_DENIED',
    async () => {
      const host = newHost({ spawner: new SetprivProcessSpawner(new CrossSpawnProcessSpawner(), setpriv!) });
      await expect(host.create({ command: 'no-such-program-xyz', args: [] })).rejects.toMatchObject({
        code: 'PROGRAM_NOT_FOUND',
      });
      const plainFile = join(mkdtempSync(join(tmpdir(), 'termgate-setpriv-')), 'not-executable');
      writeFileSync(plainFile, 'echo hi\n', { mode: 0o644 });
      await expect(host.create({ command: plainFile, args: [] })).rejects.toMatchObject({
        code: 'PERMISSION_DENIED',
      });
      const id = await host.create({ command: 'sh', args: ['-c', 'grep CapBnd /proc/self/status'] });
      await host.waitForExit(id);
      // CAP_SYS_PTRACE is bit 19: cleared in the bounding set.
      const bounding = BigInt(`0x${/CapBnd:\s+([0-9a-f]+)/.exec((await host.output(id)).output)![1]}`);
      expect(bounding & (1n << 19n)).toBe(0n);
    },
  );
});
