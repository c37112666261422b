/**
 * The second adversarial review of the sandbox (issue 18's "Done when"):
 * attacks on the allowlisted view, the identity, the syscall filter, the
 * limits and the run-later set, through `termgate serve` with the real
 * bubblewrap and filter, as root (when the tests are root) and as an
 * unprivileged user, with the world outside /tmp. Each test here failed
 * before its fix; a `test.failing` is a gap the review found and left open
 * (docs/SANDBOX-KERNEL.md and docs/RUN-LATER.md say why): it turns red the
 * day the gap closes, to be made a plain test.
 */
import { chmodSync, existsSync, mkdirSync, type Stats, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import * as path from 'node:path';
import type { WireServer } from '../e2e/support/wire-server.js';
import { AS_ROOT, hostRun, IDENTITIES, serveAs } from './support/identity.js';
import { call, makeWorld, py, run, type SandboxWorld, start } from './support/sandbox-fixture.js';

const SECTION = ['  mode: required', '  network: none', 'limits:', '  memoryMiB: 256', '  tmpMiB: 64'].join(
  '\n',
);

const statOrNull = (p: string): Stats | null => statSync(p, { throwIfNoEntry: false }) ?? null;

describe.each(IDENTITIES)('red team 2, serving as %s', (identity) => {
  let world: SandboxWorld;
  let server: WireServer;

  beforeAll(() => {
    world = makeWorld({ sandbox: SECTION });
    server = serveAs(world, identity);
  }, 60_000);
  afterAll(async () => {
    await server.dispose();
    world.dispose();
  });

  test('/dev/shm is bounded like the private /tmp: 100 MiB do not fit under tmpMiB 64', async () => {
    // bwrap's --dev is a tmpfs of half the RAM, and its shm directory was part of it: a command
    // filled the host's memory through it, past both the /tmp size and the memory limit.
    const result = await run(
      server,
      'dd if=/dev/zero of=/dev/shm/fill bs=1M count=100 2>&1; df -k /dev/shm | tail -1',
    );
    expect(result.output).toMatch(/No space left on device/);
  });

  test('/dev itself takes no files (it is read-only), while its devices still work', async () => {
    const result = await run(
      server,
      'dd if=/dev/zero of=/dev/fill bs=1M count=100 2>&1 | tail -1; echo x > /dev/null && head -c 4 /dev/zero | wc -c',
    );
    expect(result.output).toMatch(/Read-only file system|Permission denied/);
    expect(result.output).not.toMatch(/100 MiB\) copied/);
    expect(result.output.trim().split('\n').at(-1)).toBe('4');
  });

  test('shared memory still works for multiprocessing (POSIX semaphores live in /dev/shm)', async () => {
    const result = await run(
      server,
      py(
        'import multiprocessing as m\nl=m.Lock()\nwith l: print("locked")\nq=m.Queue(); q.put(7); print(q.get())',
      ),
    );
    expect(result.output).toMatch(/locked\n7/);
  });

  test('an AF_VSOCK socket, which no network namespace confines, cannot be made', async () => {
    // vsock reaches the hypervisor's side of a VM (Firecracker, QEMU, WSL2, cloud sandboxes)
    // from any network namespace: under network: none it was a way out. Only the socket is
    // made here (never a connection: the machine's own hypervisor services are not ours).
    const result = await run(
      server,
      py(
        'import socket\ntry:\n  socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM); print("vsock open")\nexcept OSError as e: print("vsock refused", e.errno)',
      ),
    );
    expect(result.output).not.toMatch(/vsock open/);
    expect(result.output).toMatch(/vsock refused 97/); // EAFNOSUPPORT
  });

  test('a command cannot leave a set-user-ID or set-group-ID file on the host', async () => {
    // NO_NEW_PRIVS keeps such a file inert inside; on the host, anyone who can reach the
    // workspace would run it as the command's uid (the person's, or termgate-sandbox, which
    // holds ACLs on the workspace and its git dir). Refused as systemd's RestrictSUIDSGID= does.
    const result = await run(
      server,
      [
        'cp /bin/true suid-chmod && chmod 4755 suid-chmod',
        'cp /bin/true sgid-chmod && chmod g+s sgid-chmod',
        py('import os\nos.close(os.open("suid-open", os.O_CREAT | os.O_WRONLY, 0o4755))'),
        py('import os\nos.mknod("suid-mknod", 0o104755)'),
        'echo done',
      ].join('; '),
    );
    expect(result.output).toMatch(/done/);
    for (const name of ['suid-chmod', 'sgid-chmod', 'suid-open', 'suid-mknod']) {
      const mode = statOrNull(path.join(world.workspace, name))?.mode ?? 0;
      expect({ name, setid: (mode & 0o6000) !== 0 }).toEqual({ name, setid: false });
    }
    // Plain modes still work.
    const plain = await run(server, 'cp /bin/true exe && chmod 750 exe && stat -c %a exe');
    expect(plain.output.trim()).toBe('750');
  });

  // Left open: host sockets are covered by the path they were bound to (the kernel's socket
  // table). A command already running when a host daemon binds a socket in the workspace can
  // rename it (or hard-link it, when it may write it): the table keeps the old path, so every
  // later command reaches the daemon through the new name. The README's socket limits.
  test.failing('a host socket bound mid-command and renamed stays unreachable for later commands', async () => {
    const moved = path.join(world.workspace, 'moved');
    mkdirSync(moved);
    chmodSync(moved, 0o777);
    const live = path.join(world.workspace, 'live.sock');
    const a = await start(
      server,
      'for i in $(seq 300); do [ -S live.sock ] && mv live.sock moved/renamed.sock && echo moved && break; sleep 0.1; done',
    );
    const heard: string[] = [];
    const daemon = createServer((socket) => socket.on('data', (d) => heard.push(String(d))));
    await new Promise<void>((resolve) => daemon.listen(live, resolve));
    try {
      chmodSync(live, 0o666);
      await call(server, 'terminal_wait_for_exit', { terminalId: a, timeoutSeconds: 40 });
      const b = await run(
        server,
        py(
          'import socket\ns=socket.socket(socket.AF_UNIX)\ns.connect("moved/renamed.sock")\ns.sendall(b"asked")\ns.close()',
        ),
      );
      expect(b.ran).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(heard).toEqual([]);
    } finally {
      await new Promise((resolve) => daemon.close(resolve));
    }
  }, 90_000);

  // Serving as root, a cgroup per terminal charges shared memory (MAP_SHARED, memfd) to the
  // terminal, which is OOM-killed inside its cgroup. Left open serving as a user without a
  // delegated cgroup: RLIMIT_DATA counts private writable mappings only, and no rlimit bounds
  // shmem (RLIMIT_AS would, but breaks V8, Go and sanitizers). See docs/SANDBOX-KERNEL.md, "Limits".
  const sharedMemory = identity === 'root' ? test : test.failing;
  sharedMemory(
    'a 1 GiB shared anonymous mapping fails under a 256 MiB limit',
    async () => {
      const result = await run(
        server,
        py(
          'import mmap\nm=mmap.mmap(-1, 1<<30)\nfor i in range(0, 1<<30, 4096): m[i]=1\nprint("shared", len(m))',
        ),
        { timeoutSeconds: 60 },
      );
      expect(result.output).not.toMatch(/shared 1073741824/);
    },
    90_000,
  );

  sharedMemory(
    'a 1 GiB memfd fails under a 256 MiB limit; the server and another terminal carry on',
    async () => {
      const result = await run(
        server,
        py(
          'import os\nfd=os.memfd_create("fill")\nb=b"x"*(1<<20)\nfor i in range(1024): os.write(fd, b)\nprint("memfd", os.fstat(fd).st_size)',
        ),
        { timeoutSeconds: 60 },
      );
      expect(result.output).not.toMatch(/memfd 1073741824/);
      const after = await run(server, 'echo still here');
      expect(after.output).toContain('still here');
    },
    90_000,
  );

  test('a command cannot leave its terminal’s cgroup (the cgroup file system is read-only inside)', async () => {
    const result = await run(
      server,
      py(
        'import glob,os\nfor f in glob.glob("/sys/fs/cgroup/cgroup.procs")+glob.glob("/sys/fs/cgroup/*/cgroup.procs"):\n  try:\n    open(f,"w").write(str(os.getpid())); print("LEFT via", f)\n  except OSError as e: print(f, e.strerror)\nprint("done")',
      ),
    );
    expect(result.output).toContain('done');
    expect(result.output).not.toContain('LEFT');
    expect(result.output).toMatch(/cgroup\.procs (Read-only file system|Permission denied)/);
  });

  // Left open: the run-later set is computed when a command starts. A repository or a package
  // directory the command itself creates has nothing protected in it, so a nested `git init`
  // with core.fsmonitor set runs on the person's next `git status` there. As root the person's
  // git refuses the repository (it belongs to termgate-sandbox: "dubious ownership") unless
  // safe.directory allows it; as a normal user it is the person's own. See docs/RUN-LATER.md.
  const nestedRepo = identity === 'unprivileged' ? test.failing : test;
  nestedRepo('a repository created inside the command runs nothing at the person’s git status', async () => {
    const marker = path.join(world.root, `PWNED_NESTED_${identity}`);
    const result = await run(
      server,
      `git init -q sub && git -C sub config core.fsmonitor "touch ${marker}"; echo rc=$?`,
    );
    expect(result.ran).toBe(true);
    hostRun(identity, ['git', 'status'], {
      cwd: path.join(world.workspace, 'sub'),
      env: { GIT_CONFIG_GLOBAL: '/dev/null' },
    });
    expect(existsSync(marker)).toBe(false);
  });
});

// Left open (serving as root only): every root-served server runs its commands as the one
// termgate-sandbox uid, and `setfacl -R` at start gives that uid rwX on the whole workspace,
// ACLs that stay after the server stops. Another root-served server's commands see `/`
// read-only, so they read the first workspace even when its owner made it 0700. A uid per
// server (or removing the entries at stop) would close it; docs/SANDBOX-KERNEL.md, "Identity".
(AS_ROOT ? test.failing : test.skip)(
  'serving as root: a 0700 workspace of another server is not readable by this server’s commands',
  async () => {
    const first = makeWorld({ sandbox: SECTION });
    const second = makeWorld({ sandbox: SECTION });
    try {
      writeFileSync(path.join(first.workspace, '.env'), `${first.secret}\n`);
      chmodSync(first.root, 0o755);
      chmodSync(first.workspace, 0o700);
      chmodSync(path.join(first.workspace, '.env'), 0o600);
      const a = serveAs(first, 'root');
      await run(a, 'true');
      await a.dispose();
      const b = serveAs(second, 'root');
      try {
        const result = await run(b, `cat ${path.join(first.workspace, '.env')} 2>&1`);
        expect(result.output).not.toContain(first.secret);
      } finally {
        await b.dispose();
      }
    } finally {
      first.dispose();
      second.dispose();
    }
  },
  60_000,
);
