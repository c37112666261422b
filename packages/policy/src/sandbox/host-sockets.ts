import { readFileSync } from 'node:fs';

/**
 * The absolute paths of the Unix sockets bound in this process's network
 * namespace, from the kernel's own table (`/proc/net/unix`, see proc(5)):
 * every daemon of the host that listens on a path (git credential-cache,
 * ssh-agent, docker, …), wherever that path is. Abstract sockets (`@…`)
 * and paths bound relative to the binder's cwd are not paths here and are
 * left out. Empty when the table cannot be read.
 */
export function boundSocketPaths(table = '/proc/net/unix'): string[] {
  let text: string;
  try {
    text = readFileSync(table, 'utf8');
  } catch {
    return [];
  }
  const paths = new Set<string>();
  for (const line of text.split('\n').slice(1)) {
    // Num RefCount Protocol Flags Type St Inode Path: the path is what follows the seventh field.
    const match = /^\s*\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s(.+)$/.exec(line);
    const path = match?.[1];
    if (path?.startsWith('/')) paths.add(path);
  }
  return [...paths];
}
