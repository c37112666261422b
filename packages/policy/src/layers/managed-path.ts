import { lstatSync, realpathSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

/** Where an administrator puts the managed policy: a root-owned system path no workspace chooses. */
export const DEFAULT_MANAGED_POLICY_PATH = '/etc/termgate/managed.yaml';

/**
 * The managed policy file in force, or `null` when there is none.
 *
 * The system file (`DEFAULT_MANAGED_POLICY_PATH`) is in force whenever it
 * exists, or cannot be told not to (any error but "no such file" counts as
 * present, so that loading it fails and the server does not start). A
 * requested path (serve's `--managed-policy`, for tests and for
 * administrators who keep it elsewhere) is used only where no system file
 * exists: it can add a managed layer, never replace or remove the
 * administrator's one. Naming another file while the system one is in
 * force is an error (thrown), not a silent choice.
 *
 * The system file, and the directory it is in (through any symlink), must
 * be owned by root and writable by no group or other user: whoever could
 * write it could loosen it. Otherwise this throws, and the server does not
 * start.
 */
export function managedPolicyPath(
  requested: string | null,
  systemPath: string = DEFAULT_MANAGED_POLICY_PATH,
): string | null {
  if (!present(systemPath)) return requested;
  if (requested !== null && canonical(requested) !== canonical(systemPath)) {
    throw new Error(
      `the managed policy ${systemPath} is in force: --managed-policy ${requested} cannot replace it (it only names a managed policy where the system has none)`,
    );
  }
  const problem = ownershipProblem(systemPath);
  if (problem !== null) throw new Error(`the managed policy ${systemPath} ${problem}`);
  return systemPath;
}

/** Why the file or its directory could be written by someone other than root, or null. */
function ownershipProblem(path: string): string | null {
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return null; // loading it fails and says why
  }
  for (const [what, p] of [
    ['file', real],
    ['directory', dirname(real)],
  ] as const) {
    const st = statSync(p);
    if (st.uid !== 0) return `is not trusted: its ${what} ${p} is owned by uid ${st.uid}, not root`;
    if ((st.mode & 0o022) !== 0) {
      return `is not trusted: its ${what} ${p} is writable by its group or others (mode ${(st.mode & 0o7777).toString(8)})`;
    }
  }
  return null;
}

function present(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code !== 'ENOENT' && code !== 'ENOTDIR';
  }
}

function canonical(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
