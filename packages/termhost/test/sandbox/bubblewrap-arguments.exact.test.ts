import { bubblewrapArguments, filesystemArguments } from '../../src/sandbox/bubblewrap-arguments.js';
import type { SandboxProfile } from '../../src/sandbox-profile.js';

/**
 * The confinement flags as exact argv pairs, not only as members: a fresh
 * `/proc` of the pid namespace (without it the command reads every host
 * process's command line), a fresh `/dev`, the cgroup namespace when the
 * kernel has one, and no private `/tmp` or `--size` unless the profile asks.
 */
const fs = (extra: Partial<SandboxProfile['filesystem']> = {}): SandboxProfile['filesystem'] => ({
  writable: [],
  readOnly: [],
  hiddenDirectories: [],
  hiddenFiles: [],
  tmp: null,
  ...extra,
});

describe('bubblewrapArguments, exactly', () => {
  it('starts the view with / read-only, then a new /dev and a new /proc', () => {
    expect(filesystemArguments(fs()).slice(0, 7)).toEqual([
      '--ro-bind',
      '/',
      '/',
      '--dev',
      '/dev',
      '--proc',
      '/proc',
    ]);
  });

  it('unshares the cgroup namespace when the kernel has it', () => {
    const args = bubblewrapArguments({ filesystem: fs(), network: 'none' }, '/w');
    expect(args).toContain('--unshare-cgroup-try');
    expect(args.filter((a) => a.startsWith('--unshare'))).toEqual([
      '--unshare-user',
      '--unshare-pid',
      '--unshare-ipc',
      '--unshare-uts',
      '--unshare-cgroup-try',
    ]);
  });

  it('without a private /tmp or a size, mounts no /tmp and gives /dev/shm no --size', () => {
    const args = filesystemArguments(fs());
    expect(args).not.toContain('/tmp');
    expect(args).not.toContain('--size');
    expect(args.slice(7, 12)).toEqual(['--perms', '1777', '--tmpfs', '/dev/shm', '--remount-ro']);
  });
});
