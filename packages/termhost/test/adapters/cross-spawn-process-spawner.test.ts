import { once } from 'node:events';
import { readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CrossSpawnProcessSpawner } from '../../src/adapters/cross-spawn-process-spawner.js';
import { openFdCount, tempDir } from '../support/processes.js';

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

/** Session id and controlling tty from /proc/<pid>/stat (fields 6 and 7). */
function sessionAndTty(pid: number): { session: number; ttyNr: number; pgrp: number } {
  const text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { pgrp: Number(fields[2]), session: Number(fields[3]), ttyNr: Number(fields[4]) };
}

describe('CrossSpawnProcessSpawner', () => {
  const spawner = new CrossSpawnProcessSpawner();
  const dir = tempDir();
  const notExecutable = join(dir.path, 'data.txt');
  writeFileSync(notExecutable, 'echo no\n', { mode: 0o644 });
  afterAll(() => dir.cleanup());

  it('starts a session and group leader without a controlling terminal, stdin on /dev/null', async () => {
    const child = await spawner.spawn({ argv: ['sleep', '30'], cwd: '/', env });
    const closed = once(child.output, 'close');
    child.output.resume();
    try {
      expect(child.pid).toBeGreaterThan(0);
      expect(sessionAndTty(child.pid)).toEqual({ pgrp: child.pid, session: child.pid, ttyNr: 0 });
      expect(readlinkSync(`/proc/${child.pid}/fd/0`)).toBe('/dev/null');
      expect(child.groupAlive()).toBe(true);
    } finally {
      expect(child.signalGroup('SIGKILL')).toBe(true);
    }
    expect(await child.exited).toEqual({ exitCode: null, signal: 'SIGKILL' });
    await closed;
    expect(child.groupAlive()).toBe(false);
    expect(child.signalGroup('SIGTERM')).toBe(false);
  });

  it('passes exactly the given environment and cwd', async () => {
    const child = await spawner.spawn({
      argv: ['sh', '-c', 'pwd; env'],
      cwd: '/tmp',
      env: { ...env, ONLY: 'me' },
    });
    const chunks: Buffer[] = [];
    const closed = once(child.output, 'close');
    child.output.on('data', (c: Buffer) => chunks.push(c));
    await closed;
    const lines = Buffer.concat(chunks).toString().trim().split('\n');
    expect(lines[0]).toBe('/tmp');
    expect(lines).toContain('ONLY=me');
    expect(lines.some((l) => l.startsWith('HOME='))).toBe(false);
    expect(await child.exited).toEqual({ exitCode: 0, signal: null });
  });

  it('gives stdout and stderr one channel, so bytes arrive in the order written', async () => {
    // Two channels (Node's default) deliver these out of order within a few hundred lines.
    const child = await spawner.spawn({
      argv: [
        'sh',
        '-c',
        'i=0; while [ $i -lt 2000 ]; do echo "o$i"; echo "e$i" >&2; i=$((i+1)); done; ' +
          'readlink /proc/self/fd/1 /proc/self/fd/2',
      ],
      cwd: '/',
      env,
    });
    const chunks: Buffer[] = [];
    const closed = once(child.output, 'close');
    child.output.on('data', (c: Buffer) => chunks.push(c));
    await closed;
    const lines = Buffer.concat(chunks).toString().trim().split('\n');
    const expected: string[] = [];
    for (let i = 0; i < 2000; i++) expected.push(`o${i}`, `e${i}`);
    expect(lines.slice(0, 4000)).toEqual(expected);
    const [fd1, fd2] = lines.slice(4000);
    expect(fd1).toMatch(/^socket:\[\d+\]$/);
    expect(fd2).toBe(fd1);
    expect(await child.exited).toEqual({ exitCode: 0, signal: null });
  });

  it.each([
    ['ENOENT', 'no-such-program-for-termhost'],
    ['EACCES', notExecutable],
  ])('rejects with %s and leaves no descriptor open', async (code, program) => {
    await spawner.spawn({ argv: [program], cwd: '/', env }).catch(() => {});
    const before = openFdCount();
    for (let i = 0; i < 20; i++) {
      await expect(spawner.spawn({ argv: [program], cwd: '/', env })).rejects.toMatchObject({ code });
    }
    // Closed pipes are released on the next loop turns.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(openFdCount()).toBe(before);
  });

  it('rejects an empty argv instead of throwing', async () => {
    await expect(spawner.spawn({ argv: [], cwd: '/', env })).rejects.toMatchObject({ code: 'EINVAL' });
  });
});
