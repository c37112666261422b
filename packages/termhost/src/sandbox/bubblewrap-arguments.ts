import type { SandboxProfile } from '../sandbox-profile.js';

/**
 * The bubblewrap (`bwrap`) arguments that confine one command to `profile`,
 * up to and including the `--` before the command's argv.
 *
 * - New user, pid, ipc, uts and (when the kernel has it) cgroup namespaces,
 *   and a fresh `/proc` of the pid namespace: the command sees none of the
 *   host's processes, so neither their `/proc/<pid>/fd` nor their signals.
 * - `--cap-drop ALL`: without it, a command started by root keeps every
 *   capability inside its user namespace and could unmount what hides or
 *   write-protects a path.
 * - `--die-with-parent`: the sandbox is killed when the process that
 *   started it (termgate) dies.
 * - The network is not unshared here: `all` shares the host's, and `none` /
 *   `proxy` run inside the server's shared network namespace, entered before
 *   bwrap starts (see `BubblewrapSandbox`).
 * - Mounts: see `filesystemArguments`.
 * - The kernel layers (`kernel`, see {@link kernelArguments}): the syscall
 *   filter, no nested user namespaces, the size of the private `/tmp`.
 */
export function bubblewrapArguments(
  profile: SandboxProfile,
  cwd: string,
  kernel: KernelConfinement = NO_KERNEL_LAYERS,
): string[] {
  const args = [
    ...kernelArguments(kernel),
    '--die-with-parent',
    '--unshare-user',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--cap-drop',
    'ALL',
    ...filesystemArguments(profile.filesystem, kernel.tmpBytes),
  ];
  args.push('--chdir', cwd, '--');
  return args;
}

// ---- the filesystem view (mounts) -------------------------------------------------------------

/**
 * The mounts, in order, each later one winning for the paths it covers:
 * `/` read-only, a new `/dev` and `/proc`, `/dev/shm` and the private
 * `/tmp` (a bounded tmpfs each); the emptied
 * trees (an empty tmpfs each), the readable paths shown through them
 * read-only and the allowed sockets bound in; the writable paths; the
 * read-only carve-outs; the placeholders (an empty read-only tmpfs or
 * `/dev/null` where a protected path does not exist yet: bwrap creates the
 * mount point); the hidden paths; last, each emptied tree remounted
 * read-only (not recursively: what was mounted inside keeps its own mode),
 * after every mount point inside it was created, and `/dev`.
 */
export function filesystemArguments(
  fs: SandboxProfile['filesystem'],
  /** The private `/tmp`'s size in bytes (see `privateTmpArguments`); `null`: the kernel's default. */
  tmpBytes: number | null = null,
): string[] {
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
  // bwrap's /dev is a tmpfs of the kernel's default size (half the RAM), writable by the
  // command, /dev/shm a plain directory in it: its own bounded tmpfs, and /dev read-only below.
  args.push(...sharedMemoryArguments(tmpBytes));
  if (fs.tmp !== null) args.push(...privateTmpArguments(tmpBytes));
  const emptied = parentsFirst(fs.emptied ?? []);
  for (const path of emptied) args.push('--tmpfs', path);
  for (const path of parentsFirst(fs.readable ?? [])) args.push('--ro-bind', path, path);
  for (const path of parentsFirst(fs.sockets ?? [])) args.push('--ro-bind', path, path);
  for (const path of parentsFirst(fs.writable)) args.push('--bind', path, path);
  for (const path of parentsFirst(fs.readOnly)) args.push('--ro-bind', path, path);
  for (const path of parentsFirst(fs.placeholderDirectories ?? []))
    args.push('--tmpfs', path, '--remount-ro', path);
  for (const path of parentsFirst(fs.placeholderFiles ?? [])) args.push('--ro-bind', '/dev/null', path);
  for (const path of parentsFirst(fs.hiddenDirectories)) args.push('--tmpfs', path, '--remount-ro', path);
  for (const path of parentsFirst(fs.hiddenFiles)) args.push('--ro-bind', '/dev/null', path);
  for (const path of emptied) args.push('--remount-ro', path);
  // Not recursive: /dev/pts and /dev/shm keep their own mode; writing a device is no file write.
  args.push('--remount-ro', '/dev');
  return args;
}

/** Shorter paths first, so that a path nested in another is mounted after it and stays visible. */
function parentsFirst(paths: readonly string[]): string[] {
  return [...new Set(paths)].sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
}

// ---- Kernel layers: the syscall filter, nested user namespaces, the private /tmp's size. ----

/** What `bubblewrapArguments` adds beyond the namespaces and the view. */
export interface KernelConfinement {
  /** The descriptor (in bwrap) of a compiled seccomp filter, for `--seccomp`; `null`: none. */
  readonly seccompFd: number | null;
  /** `--disable-userns`: the command cannot create user namespaces (bwrap ≥ 0.8). */
  readonly disableUserns: boolean;
  /** Size of the private `/tmp` tmpfs, in bytes; `null`: unbounded (half the RAM, the kernel's default). */
  readonly tmpBytes: number | null;
}

/** No kernel layer: the probe of `check` and the bench's floor. */
export const NO_KERNEL_LAYERS: KernelConfinement = Object.freeze({
  seccompFd: null,
  disableUserns: false,
  tmpBytes: null,
});

/** `--disable-userns` and `--seccomp FD`, as `kernel` asks. */
export function kernelArguments(kernel: KernelConfinement): string[] {
  const args: string[] = [];
  if (kernel.disableUserns) args.push('--disable-userns');
  if (kernel.seccompFd !== null) args.push('--seccomp', String(kernel.seccompFd));
  return args;
}

/** `/dev/shm` (POSIX shared memory, semaphores): a tmpfs of the command's own, as large as the private `/tmp`. */
function sharedMemoryArguments(tmpBytes: number | null): string[] {
  const size = tmpBytes === null ? [] : ['--size', String(tmpBytes)];
  return ['--perms', '1777', ...size, '--tmpfs', '/dev/shm'];
}

/** The private `/tmp`: a tmpfs of the command's own (so one per terminal), sticky and world-writable like /tmp. */
function privateTmpArguments(tmpBytes: number | null): string[] {
  const size = tmpBytes === null ? [] : ['--size', String(tmpBytes)];
  return ['--perms', '1777', ...size, '--tmpfs', '/tmp'];
}
