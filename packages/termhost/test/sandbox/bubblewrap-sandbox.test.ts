import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CrossSpawnProcessSpawner } from '../../src/adapters/cross-spawn-process-spawner.js';
import { readStat } from '../../src/adapters/posix-process-group.js';
import { BubblewrapSandbox } from '../../src/sandbox/bubblewrap-sandbox.js';
import { grantSandboxAccess, resolveSandboxIdentity } from '../../src/sandbox/sandbox-identity.js';
import { SandboxUnavailableError } from '../../src/sandbox/sandbox-unavailable-error.js';
import { TerminalCgroups } from '../../src/sandbox/terminal-cgroups.js';
import type { SandboxProfile } from '../../src/sandbox-profile.js';

/** As root, commands must run as the install step's unprivileged user. */
const identity = process.getuid?.() === 0 ? resolveSandboxIdentity('termgate-sandbox') : null;

/** As root with writable cgroup controllers (this project's CI), terminals get a cgroup each. */
const withCgroups = TerminalCgroups.detect() !== null || (process.env.CI && identity !== null) ? it : it.skip;

/** Real bubblewrap: how the adapter fails closed. */
describe('BubblewrapSandbox', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'termgate-bwrap-'));
    // As the runtime does at start: the sandbox user may work in the writable directory.
    if (identity !== null) grantSandboxAccess(identity, [dir], []);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const profile = (network: SandboxProfile['network']): SandboxProfile => ({
    filesystem: { writable: [dir], readOnly: [], hiddenDirectories: [], hiddenFiles: [], tmp: null },
    network,
  });
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

  it('the plain spawner refuses a request that carries a profile (ESANDBOX), and starts nothing', async () => {
    await expect(
      new CrossSpawnProcessSpawner().spawn({
        argv: ['touch', join(dir, 'ran')],
        cwd: dir,
        env,
        sandbox: profile('all'),
      }),
    ).rejects.toMatchObject({ code: 'ESANDBOX' });
    expect(readdirSync(dir)).toEqual([]);
  });

  (identity === null ? it.skip : it)(
    'as root without an identity, start refuses: a command would be uid 0',
    async () => {
      await expect(BubblewrapSandbox.start({ network: 'all', runtimeDir: dir })).rejects.toThrow(
        /serves as root and no unprivileged identity/,
      );
    },
  );

  withCgroups(
    'each terminal is born in a cgroup of its own with the limits, which the server never joins, removed once it ended',
    async () => {
      const limits = { processes: 77, memoryMiB: 123, tmpMiB: 16 };
      const sandbox = await BubblewrapSandbox.start({ network: 'none', runtimeDir: dir, identity, limits });
      try {
        expect(sandbox.layers.limits).toMatch(/^cgroup v[12] per terminal: .*123 MiB.*pids\.max 77/);
        const own = readFileSync('/proc/self/cgroup', 'utf8');
        const spawned = await sandbox
          .spawner(new CrossSpawnProcessSpawner())
          .spawn({ argv: ['sleep', '1000'], cwd: dir, env, sandbox: profile('none') });
        // The launcher joins, then execs bwrap: the leader's cgroups are the terminal's.
        let lines: string[] = [];
        for (let i = 0; i < 200 && !lines.some((l) => l.includes('/t-')); i++) {
          lines = readFileSync(`/proc/${spawned.pid}/cgroup`, 'utf8').split('\n');
          await new Promise((r) => setTimeout(r, 10));
        }
        const memory = lines.find((l) => /^\d+:(memory)?:/.test(l) && l.includes('/t-'));
        expect(memory).toBeDefined();
        const mount = (controller: string): string =>
          readFileSync('/proc/self/mountinfo', 'utf8')
            .split('\n')
            .map((l) => l.split(' '))
            .find((f) => {
              const dash = f.indexOf('-');
              return controller === ''
                ? f[dash + 1] === 'cgroup2'
                : (f[dash + 3] ?? '').split(',').includes(controller);
            })![4]!;
        const v1 = memory!.split(':')[1] === 'memory';
        const path = join(mount(v1 ? 'memory' : ''), memory!.split(':')[2]!);
        const limit = readFileSync(join(path, v1 ? 'memory.limit_in_bytes' : 'memory.max'), 'utf8').trim();
        expect(Number(limit)).toBe(123 * 1024 * 1024);
        expect(readFileSync('/proc/self/cgroup', 'utf8')).toBe(own);
        spawned.signalGroup('SIGKILL');
        await spawned.exited;
        let gone = false;
        for (let i = 0; i < 300 && !gone; i++) {
          gone = !readdirSync(join(path, '..')).includes(path.split('/').at(-1)!);
          if (!gone) await new Promise((r) => setTimeout(r, 20));
        }
        expect(gone).toBe(true);
      } finally {
        await sandbox.close();
      }
    },
    30_000,
  );

  it('with cgroups off, the limits are rlimits, and the record says so', async () => {
    const sandbox = await BubblewrapSandbox.start({
      network: 'all',
      runtimeDir: dir,
      identity,
      cgroups: false,
    });
    try {
      expect(sandbox.layers.limits).toMatch(/^rlimits only/);
    } finally {
      await sandbox.close();
    }
  });

  it('refuses a request without a profile, and one whose network it did not start', async () => {
    const sandbox = await BubblewrapSandbox.start({ network: 'all', runtimeDir: dir, identity });
    try {
      const spawner = sandbox.spawner(new CrossSpawnProcessSpawner());
      await expect(spawner.spawn({ argv: ['true'], cwd: dir, env })).rejects.toMatchObject({
        code: 'ESANDBOX',
      });
      await expect(
        spawner.spawn({ argv: ['true'], cwd: dir, env, sandbox: profile('none') }),
      ).rejects.toMatchObject({
        code: 'ESANDBOX',
      });
    } finally {
      await sandbox.close();
    }
  });

  it('passes the mounts through --args, not the command line: 1300 mounts of 900-byte paths (2.3 MB, E2BIG as argv) run, and the arguments file is gone', async () => {
    const runtimeDir = join(dir, 'runtime');
    mkdirSync(runtimeDir, { mode: 0o700 });
    const readOnly: string[] = [];
    const parent = join(dir, 'a'.repeat(230), 'a'.repeat(230), 'a'.repeat(230));
    for (let i = 0; i < 1300; i++) {
      readOnly.push(join(parent, `${'b'.repeat(190)}${i}`));
      mkdirSync(readOnly.at(-1)!, { recursive: true });
    }
    const sandbox = await BubblewrapSandbox.start({ network: 'all', runtimeDir, identity });
    try {
      const spawned = await sandbox.spawner(new CrossSpawnProcessSpawner()).spawn({
        argv: ['sh', '-c', 'echo ran; tr "\\0" " " < /proc/$PPID/cmdline | wc -c'],
        cwd: dir,
        env,
        sandbox: { ...profile('all'), filesystem: { ...profile('all').filesystem, readOnly } },
      });
      let output = '';
      spawned.output.setEncoding('utf8').on('data', (chunk: string) => {
        output += chunk;
      });
      expect(await spawned.exited).toMatchObject({ exitCode: 0 });
      expect(output).toMatch(/^ran\n/);
      // Only the filter compiled at start is left: no arguments file.
      expect(readdirSync(runtimeDir)).toEqual(['seccomp.bpf']);
    } finally {
      await sandbox.close();
    }
  }, 60_000);

  it('a hidden path gone since its profile was computed (an unlinked host socket) does not fail the spawn; one still there stays covered', async () => {
    const runtimeDir = join(dir, 'runtime');
    mkdirSync(runtimeDir, { mode: 0o700 });
    // A read-only directory of the view: bwrap cannot create a mount point in it.
    const readOnlyDir = join(dir, 'ro');
    mkdirSync(readOnlyDir);
    const secret = join(readOnlyDir, 'secret');
    writeFileSync(secret, 'the secret\n', { mode: 0o644 });
    const gone = join(readOnlyDir, 'gone.sock');
    const sandbox = await BubblewrapSandbox.start({ network: 'none', runtimeDir, identity });
    try {
      const base = profile('none').filesystem;
      const spawned = await sandbox.spawner(new CrossSpawnProcessSpawner()).spawn({
        argv: ['sh', '-c', `echo ran; cat ${secret}; ls ${readOnlyDir}`],
        cwd: dir,
        env,
        sandbox: {
          ...profile('none'),
          filesystem: { ...base, readOnly: [readOnlyDir], hiddenFiles: [secret, gone] },
        },
      });
      let output = '';
      spawned.output.setEncoding('utf8').on('data', (chunk: string) => {
        output += chunk;
      });
      expect(await spawned.exited).toMatchObject({ exitCode: 0 });
      // Covered, or out of the identity's reach (its cover then dropped as unneeded): never its bytes.
      expect(output).toMatch(/^ran\n/);
      expect(output).not.toContain('the secret');
      expect(output.trim().split('\n').at(-1)).toBe('secret');
    } finally {
      await sandbox.close();
    }
  }, 60_000);

  it('a missing program rejects with ENOENT, as the port requires, before bwrap starts', async () => {
    const sandbox = await BubblewrapSandbox.start({ network: 'all', runtimeDir: dir, identity });
    try {
      const spawner = sandbox.spawner(new CrossSpawnProcessSpawner());
      await expect(
        spawner.spawn({ argv: ['no-such-program-xyz'], cwd: dir, env, sandbox: profile('all') }),
      ).rejects.toMatchObject({ code: 'ENOENT' });
    } finally {
      await sandbox.close();
    }
  });

  it('once its shared network namespace is gone, every spawn is refused', async () => {
    const sandbox = await BubblewrapSandbox.start({ network: 'none', runtimeDir: dir, identity });
    const spawner = sandbox.spawner(new CrossSpawnProcessSpawner());
    const ok = await spawner.spawn({ argv: ['true'], cwd: dir, env, sandbox: profile('none') });
    expect(await ok.exited).toEqual({ exitCode: 0, signal: null });
    // Kill the namespace's holder behind the adapter's back: this process's bwrap child's `sleep infinity`.
    let killed = 0;
    for (const pid of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
      let cmdline = '';
      try {
        cmdline = readFileSync(`/proc/${pid}/cmdline`, 'latin1');
      } catch {
        continue;
      }
      const parent = readStat(pid)?.ppid;
      if (cmdline === 'sleep\0infinity\0' && parent !== undefined && readStat(parent)?.ppid === process.pid) {
        process.kill(Number(pid), 'SIGKILL');
        killed++;
      }
    }
    expect(killed).toBe(1);
    // The holder's end reaches the adapter asynchronously; from then on every spawn is refused.
    let refusal: unknown = null;
    for (let i = 0; i < 50 && refusal === null; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      refusal = await spawner.spawn({ argv: ['true'], cwd: dir, env, sandbox: profile('none') }).then(
        async (started) => {
          await started.exited;
          return null;
        },
        (error: unknown) => error,
      );
    }
    expect(refusal).toMatchObject({ code: 'ESANDBOX' });
    await sandbox.close();
  });

  it('start fails with the package to install when bwrap is not on PATH', async () => {
    const failure = BubblewrapSandbox.start({
      network: 'none',
      runtimeDir: dir,
      identity,
      path: '/nonexistent',
    });
    await expect(failure).rejects.toBeInstanceOf(SandboxUnavailableError);
    await expect(failure).rejects.toThrow(/apt-get install bubblewrap/);
  });

  it("start fails when a namespace every command needs cannot be made (the probe runs the commands' arguments)", async () => {
    // A bwrap that runs, except with --unshare-ipc, as on a kernel that refuses
    // that namespace: a probe lighter than the commands' sandbox would pass it,
    // and then every command would fail after start-up said the sandbox works.
    const real = execFileSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).trim();
    const fake = join(dir, 'bin');
    mkdirSync(fake);
    writeFileSync(
      join(fake, 'bwrap'),
      `#!/bin/sh\ncase " $* " in *" --unshare-ipc "*) echo "bwrap: No permissions to create new namespace" >&2; exit 1;; esac\nexec ${real} "$@"\n`,
      { mode: 0o755 },
    );
    const failure = BubblewrapSandbox.start({
      network: 'all',
      runtimeDir: dir,
      identity,
      path: `${fake}:${process.env.PATH}`,
    });
    await expect(failure).rejects.toBeInstanceOf(SandboxUnavailableError);
    await expect(failure).rejects.toThrow(/No permissions to create new namespace/);
  });

  it('start fails naming socat when an allowlist needs it and it is missing', async () => {
    const { dirname } = await import('node:path');
    const { execFileSync } = await import('node:child_process');
    const bwrapDir = dirname(execFileSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).trim());
    const nsenterDir = dirname(execFileSync('sh', ['-c', 'command -v nsenter'], { encoding: 'utf8' }).trim());
    const only = mkdtempSync(join(tmpdir(), 'termgate-path-'));
    const { symlinkSync } = await import('node:fs');
    symlinkSync(join(bwrapDir, 'bwrap'), join(only, 'bwrap'));
    symlinkSync(join(nsenterDir, 'nsenter'), join(only, 'nsenter'));
    try {
      await expect(
        BubblewrapSandbox.start({
          network: { allow: ['example.org'], onRefused: () => {} },
          runtimeDir: dir,
          identity,
          path: only,
        }),
      ).rejects.toThrow(/socat was not found on PATH.*apt-get install socat/s);
    } finally {
      rmSync(only, { recursive: true, force: true });
    }
  });
});
