import type { SandboxProfile } from '../../sandbox-profile.js';

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
 */
export function bubblewrapArguments(profile: SandboxProfile, cwd: string): string[] {
  const args = [
    '--die-with-parent',
    '--unshare-user',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--cap-drop',
    'ALL',
    ...filesystemArguments(profile.filesystem),
  ];
  args.push('--chdir', cwd, '--');
  return args;
}

// ---- the filesystem view (mounts) -------------------------------------------------------------

/**
 * The mounts, in order, each later one winning for the paths it covers:
 * `/` read-only, a new `/dev` and `/proc`, the private `/tmp`; the emptied
 * trees (an empty tmpfs each), the readable paths shown through them
 * read-only and the allowed sockets bound in; the writable paths; the
 * read-only carve-outs; the placeholders (an empty read-only tmpfs or
 * `/dev/null` where a protected path does not exist yet: bwrap creates the
 * mount point); the hidden paths; last, each emptied tree remounted
 * read-only (not recursively: what was mounted inside keeps its own mode),
 * after every mount point inside it was created.
 */
export function filesystemArguments(fs: SandboxProfile['filesystem']): string[] {
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
  if (fs.tmp !== null) args.push('--bind', fs.tmp, '/tmp');
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
  return args;
}

/** Shorter paths first, so that a path nested in another is mounted after it and stays visible. */
function parentsFirst(paths: readonly string[]): string[] {
  return [...new Set(paths)].sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
}
