/**
 * The Landlock tier's launcher and rules on the real kernel: what a
 * profile's rules let a process read and write, that a protected path
 * inside a writable directory and a hidden path stay out (siblings granted,
 * symbolic links never followed), that the syscall filter is loaded with the
 * tier's socket rules, and that a step that cannot be applied runs nothing.
 */
import { spawnSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import {
  compileSeccompFilter,
  LANDLOCK_MIN_ABI,
  LandlockSandbox,
  landlockArgv,
  landlockRules,
} from '../../src/sandbox/index.js';

const PERL = '/usr/bin/perl';
const HANDLED = { fs: 0xffff, net: 3, scoped: 3 };

describe('the landlock launcher', () => {
  let root: string;
  let ws: string;
  let hidden: string;
  let filter: string;

  beforeAll(() => {
    // Not under /tmp: the tier never grants the host's /tmp.
    root = mkdtempSync('/var/tmp/termgate-landlock-launcher-');
    ws = join(root, 'ws');
    hidden = join(root, 'hidden');
    for (const dir of [ws, join(ws, '.git'), join(ws, 'src'), hidden]) mkdirSync(dir, { recursive: true });
    writeFileSync(join(ws, '.git', 'config'), 'original\n');
    writeFileSync(join(ws, 'src', 'a.txt'), 'a\n');
    writeFileSync(join(hidden, 'secret'), 'the-secret\n');
    writeFileSync(join(root, 'outside.txt'), 'original\n');
    symlinkSync(hidden, join(ws, 'link-to-hidden'));
    filter = compileSeccompFilter(join(root, 'filter.bpf'), {
      socketFamilies: [2, 10, 16],
      streamOnly: true,
    }).path;
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  function confined(script: string, abi = LANDLOCK_MIN_ABI): { status: number | null; out: string } {
    const paths = landlockRules(
      {
        filesystem: {
          writable: [ws],
          readOnly: [join(ws, '.git')],
          hiddenDirectories: [hidden],
          hiddenFiles: [],
          tmp: null,
        },
        network: 'none',
      },
      null,
    );
    const argv = landlockArgv(PERL, { handled: HANDLED, paths, connectPorts: [], abi, seccompFd: 3 }, [
      '/bin/sh',
      '-c',
      script,
    ]);
    const fd = openSync(filter, 'r');
    try {
      const result = spawnSync(argv[0]!, argv.slice(1), {
        cwd: ws,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe', fd],
      });
      return { status: result.status, out: `${result.stdout}${result.stderr}` };
    } finally {
      closeSync(fd);
    }
  }

  test('the kernel has the Landlock ABI the tier needs', () => {
    expect(LandlockSandbox.abi(PERL)).toBeGreaterThanOrEqual(LANDLOCK_MIN_ABI);
  });

  test('writes reach the writable directory, not its protected git dir nor anything outside', () => {
    const r = confined(
      `echo changed > src/a.txt; mkdir src/new && echo n > src/new/f; echo evil >> .git/config; echo evil > .git/hooks-planted; mv .git moved; echo x > ${join(root, 'outside.txt')}; echo x > ${join(root, 'planted')}`,
    );
    expect(r.status).not.toBe(125);
    expect(readFileSync(join(ws, 'src', 'a.txt'), 'utf8')).toBe('changed\n');
    expect(readFileSync(join(ws, 'src', 'new', 'f'), 'utf8')).toBe('n\n');
    expect(readFileSync(join(ws, '.git', 'config'), 'utf8')).toBe('original\n');
    expect(existsSync(join(ws, '.git', 'hooks-planted'))).toBe(false);
    expect(existsSync(join(ws, 'moved'))).toBe(false);
    expect(readFileSync(join(root, 'outside.txt'), 'utf8')).toBe('original\n');
    expect(existsSync(join(root, 'planted'))).toBe(false);
  });

  test('a hidden path stays unreadable, also through a symbolic link beside a protected path', () => {
    const r = confined(`cat ${join(hidden, 'secret')}; cat link-to-hidden/secret; cat .git/config`);
    expect(r.out).not.toContain('the-secret');
    expect(r.out).toContain('original');
  });

  test('no_new_privs and the syscall filter are in force, with the tier socket rules', () => {
    const py = (code: string): string => `/usr/bin/python3 -c '${code}' 2>&1 | tail -1`;
    const r = confined(
      [
        'grep -E "^(NoNewPrivs|Seccomp):" /proc/self/status',
        py('import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM); print("UDP OPEN")'),
        py('import socket; socket.socket(socket.AF_UNIX); print("UNIX OPEN")'),
        py('import socket; socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262); print("MPTCP OPEN")'),
        py('import socket; a, b = socket.socketpair(); print("PAIR OPEN")'),
        py('import socket; socket.socket(socket.AF_INET, socket.SOCK_STREAM); print("TCP OPEN")'),
      ].join('; '),
    );
    expect(r.out).toMatch(/NoNewPrivs:\s+1/);
    expect(r.out).toMatch(/Seccomp:\s+2/);
    expect(r.out).not.toMatch(/UDP OPEN|UNIX OPEN|MPTCP OPEN/);
    expect(r.out).toContain('PAIR OPEN');
    expect(r.out).toContain('TCP OPEN');
  });

  test('an ABI the kernel does not have stops the launch: the program never runs', () => {
    const proof = join(root, 'ran');
    const r = confined(`touch ${proof}`, 99);
    expect(r.status).toBe(125);
    expect(r.out).toMatch(/termgate: Landlock ABI \d+ here, 99 needed/);
    expect(existsSync(proof)).toBe(false);
  });
});
