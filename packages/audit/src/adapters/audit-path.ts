import { closeSync, fsyncSync, lstatSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname, parse as parsePath } from 'node:path';

/** Checks and set-up of an audit file's path, before and after it is opened (`trail-file.ts`). */

/** Makes a new file's directory entry durable. Best effort: some filesystems refuse fsync on directories. */
export function fsyncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Not fatal: the file's own data is fsynced per record.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Refuses, before anything is created, an audit path that names a
 * directory or a symlink whose target does not exist (opening that would
 * create a file somewhere the path does not show).
 */
export function assertUsablePath(path: string): void {
  let link: ReturnType<typeof lstatSync> | undefined;
  try {
    link = lstatSync(path);
  } catch {
    return; // Missing (created by open) or unreachable (open names the cause).
  }
  if (link.isDirectory()) throw new Error(`${path} is a directory; --audit names a file`);
  if (!link.isSymbolicLink()) return;
  try {
    if (statSync(path).isDirectory()) throw new Error(`${path} leads to a directory; --audit names a file`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error(`${path} is a symlink to a file that does not exist (a dangling symlink)`);
    }
    throw error;
  }
}

/**
 * Creates `dir` and its missing parents (mode 0700), one `mkdir` each, from
 * the deepest existing ancestor down; throws the first failure. Unlike
 * `mkdirSync(dir, { recursive: true })` on Node 20, this ends on every file
 * system: under /proc a `mkdir` answers ENOENT for a parent that exists,
 * which sends Node's recursive walk round forever on the event loop.
 */
export function makeParentDirectories(dir: string): void {
  const missing: string[] = [];
  const { root } = parsePath(dir);
  for (let at = dir; at !== root; at = dirname(at)) {
    try {
      lstatSync(at);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      missing.push(at);
    }
  }
  for (const at of missing.reverse()) {
    try {
      mkdirSync(at, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}
