import { closeSync, readdirSync, readFileSync } from 'node:fs';

/** `O_CLOEXEC` as `/proc/<pid>/fdinfo` prints it (octal flags). */
const O_CLOEXEC = 0o2000000;

/**
 * Closes every descriptor above 2 that this process inherited without
 * close-on-exec (a launcher's pipe at fd 251, a jobserver, …), so that no
 * command or agent started later inherits it: commands start with only
 * stdin, stdout and stderr. Node's own descriptors are all close-on-exec and
 * are left alone, as is Node's IPC channel (`NODE_CHANNEL_FD`). Linux only
 * (it reads `/proc/self/fdinfo`); elsewhere it closes nothing. Returns the
 * descriptors it closed.
 */
export function closeInheritedDescriptors(): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc/self/fdinfo');
  } catch {
    return [];
  }
  const keep = new Set([0, 1, 2]);
  const channel = Number(process.env.NODE_CHANNEL_FD);
  if (Number.isInteger(channel)) keep.add(channel);
  const closed: number[] = [];
  for (const entry of entries) {
    const fd = Number(entry);
    if (!Number.isInteger(fd) || keep.has(fd)) continue;
    let info: string;
    try {
      info = readFileSync(`/proc/self/fdinfo/${fd}`, 'latin1');
    } catch {
      continue; // closed meanwhile (the directory listing's own descriptor, say)
    }
    const flags = /^flags:\s+([0-7]+)/m.exec(info);
    if (flags === null || (Number.parseInt(flags[1]!, 8) & O_CLOEXEC) !== 0) continue;
    try {
      closeSync(fd);
      closed.push(fd);
    } catch {
      // already closed
    }
  }
  return closed;
}
