import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import type { SpawnRequest } from '../ports/process-spawner.js';

/** The absolute path of `name` on `path` (a PATH value, `process.env.PATH` by default), executable, or `null`. */
export function findOnPath(name: string, path = process.env.PATH ?? ''): string | null {
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return null;
}

/**
 * Throws what `execvp` would fail with (an error whose `code` is `ENOENT` or
 * `EACCES`) when the request's program cannot be started: found on the
 * request's PATH when it has no slash, else resolved against its cwd.
 * Spawners that start the program through a launcher check first, so a
 * missing program still rejects instead of becoming the launcher's exit 127.
 */
export function assertExecutable(request: SpawnRequest): void {
  const [program] = request.argv;
  const fail = (code: string): never => {
    throw Object.assign(new Error(`spawn ${program} ${code}`), { code });
  };
  if (program === undefined) throw Object.assign(new Error('empty argv'), { code: 'EINVAL' });
  if (!program.includes('/')) {
    if (findOnPath(program, request.env.PATH ?? '') === null) fail('ENOENT');
    return;
  }
  const file = isAbsolute(program) ? program : resolve(request.cwd, program);
  let isFile = false;
  try {
    isFile = statSync(file).isFile();
  } catch {
    fail('ENOENT');
  }
  if (!isFile || !isExecutableFile(file)) fail('EACCES');
}

function isExecutableFile(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}
