import {
  bubblewrapArguments,
  filesystemArguments,
  kernelArguments,
} from '../../src/sandbox/bubblewrap-arguments.js';
import type { SandboxProfile } from '../../src/sandbox-profile.js';

const profile = (fs: Partial<SandboxProfile['filesystem']> = {}): SandboxProfile => ({
  filesystem: { writable: [], readOnly: [], hiddenDirectories: [], hiddenFiles: [], tmp: null, ...fs },
  network: 'none',
});

/** The `--flag SRC DEST` triples of `flag`, in order. */
function mounts(args: readonly string[], flag: string): string[][] {
  const found: string[][] = [];
  args.forEach((arg, i) => {
    if (arg === flag) found.push([args[i + 1]!, args[i + 2]!]);
  });
  return found;
}

describe('bubblewrapArguments', () => {
  it('always drops every capability and isolates pids, ipc, uts and the user, and ends with the cwd and --', () => {
    const args = bubblewrapArguments(profile(), '/w');
    expect(args).toEqual(
      expect.arrayContaining([
        '--unshare-user',
        '--unshare-pid',
        '--unshare-ipc',
        '--unshare-uts',
        '--die-with-parent',
      ]),
    );
    expect(args[args.indexOf('--cap-drop') + 1]).toBe('ALL');
    expect(args.slice(-3)).toEqual(['--chdir', '/w', '--']);
    expect(args).not.toContain('--unshare-net');
    expect(args).not.toContain('--new-session');
  });

  it('mounts / read-only first, then tmp, writable, read-only carve-outs and hidden paths, in that order', () => {
    const args = bubblewrapArguments(
      profile({
        writable: ['/w/sub', '/w'],
        readOnly: ['/w/.git/config'],
        hiddenDirectories: ['/home/u/.ssh'],
        hiddenFiles: ['/home/u/.netrc'],
        tmp: '/run/tg/tmp',
      }),
      '/w',
    );
    const order = ['/', '/tmp', '/w', '/w/sub', '/w/.git/config', '/home/u/.ssh', '/home/u/.netrc'].map(
      (dest) =>
        args.findIndex(
          (arg, i) => arg === dest && i > 0 && args[i - 2] !== '--chdir' && args[i - 1] !== '--chdir',
        ),
    );
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(mounts(args, '--ro-bind')).toEqual([
      ['/', '/'],
      ['/w/.git/config', '/w/.git/config'],
      ['/dev/null', '/home/u/.netrc'],
    ]);
    expect(mounts(args, '--bind')).toEqual([
      ['/w', '/w'],
      ['/w/sub', '/w/sub'],
    ]);
    // The private /tmp: a tmpfs of the command's own, not the host directory.
    expect(args.slice(args.indexOf('/tmp') - 3, args.indexOf('/tmp') + 1)).toEqual([
      '--perms',
      '1777',
      '--tmpfs',
      '/tmp',
    ]);
    const hidden = args.indexOf('--tmpfs', args.indexOf('/tmp'));
    expect(args.slice(hidden, hidden + 4)).toEqual([
      '--tmpfs',
      '/home/u/.ssh',
      '--remount-ro',
      '/home/u/.ssh',
    ]);
  });

  it('adds the kernel layers: --disable-userns, the filter on its fd, and the size of /tmp', () => {
    const kernel = { seccompFd: 3, disableUserns: true, tmpBytes: 64 * 1024 * 1024 };
    const args = bubblewrapArguments(profile({ tmp: '/run/tg/tmp' }), '/w', kernel);
    expect(args).toContain('--disable-userns');
    expect(args[args.indexOf('--seccomp') + 1]).toBe('3');
    const tmp = args.indexOf('/tmp');
    expect(args.slice(tmp - 5, tmp + 1)).toEqual([
      '--perms',
      '1777',
      '--size',
      String(64 << 20),
      '--tmpfs',
      '/tmp',
    ]);
    expect(kernelArguments({ seccompFd: null, disableUserns: false, tmpBytes: null })).toEqual([]);
  });
});

describe('filesystem view arguments', () => {
  it('empties the trees first, shows readable paths and sockets through them, and remounts the trees read-only last', () => {
    const args = bubblewrapArguments(
      profile({
        emptied: ['/home/u', '/run'],
        readable: ['/home/u/.gitconfig'],
        sockets: ['/run/user/1/agent.sock'],
        writable: ['/home/u/.npm', '/w'],
        readOnly: ['/w/.npmrc'],
        placeholderDirectories: ['/w/.husky'],
        placeholderFiles: ['/w/.yarnrc'],
        hiddenFiles: ['/w/db.sock'],
      }),
      '/w',
    );
    const at = (flag: string, path: string): number =>
      args.findIndex((arg, i) => arg === flag && args[i + 1] === path);
    const atDest = (flag: string, dest: string): number =>
      args.findIndex((arg, i) => arg === flag && args[i + 2] === dest);
    const steps = [
      at('--tmpfs', '/home/u'),
      atDest('--ro-bind', '/home/u/.gitconfig'),
      atDest('--ro-bind', '/run/user/1/agent.sock'),
      atDest('--bind', '/home/u/.npm'),
      atDest('--ro-bind', '/w/.npmrc'),
      at('--tmpfs', '/w/.husky'),
      atDest('--ro-bind', '/w/.yarnrc'),
      atDest('--ro-bind', '/w/db.sock'),
      at('--remount-ro', '/home/u'),
    ];
    expect(steps.every((i) => i >= 0)).toBe(true);
    expect([...steps].sort((a, b) => a - b)).toEqual(steps);
    // A placeholder directory is read-only at once; a placeholder file is /dev/null.
    expect(args[at('--tmpfs', '/w/.husky') + 2]).toBe('--remount-ro');
    expect(args[atDest('--ro-bind', '/w/.yarnrc') + 1]).toBe('/dev/null');
    // The two trees, the placeholder directory, and /dev.
    expect(args.filter((a) => a === '--remount-ro').length).toBe(4);
  });

  it('gives /dev/shm a tmpfs as large as /tmp, and makes /dev read-only after every mount', () => {
    const args = filesystemArguments(
      { writable: ['/w'], readOnly: [], hiddenDirectories: [], hiddenFiles: [], tmp: '/run/tg/tmp' },
      64 * 1024 * 1024,
    );
    const shm = args.indexOf('/dev/shm');
    expect(args.slice(shm - 5, shm + 1)).toEqual([
      '--perms',
      '1777',
      '--size',
      String(64 * 1024 * 1024),
      '--tmpfs',
      '/dev/shm',
    ]);
    expect(shm).toBeGreaterThan(args.indexOf('/dev'));
    expect(args.slice(-2)).toEqual(['--remount-ro', '/dev']);
  });
});
