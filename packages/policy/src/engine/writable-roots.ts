import { tmpdir } from 'node:os';
import { realpathOrNull } from '../policy-file/policy-paths.js';
import type { LoadedPolicy } from '../policy-file/policy-types.js';

/**
 * The directories a command judged under `policy` may write into, as far
 * as the policy says: its cwd roots (where lines run) and the temporary
 * directory. A program found inside one is not trusted by name (anything
 * running there could have put it there). The one place this is computed:
 * extend it when the policy gains a list of writable paths.
 */
export function writableRoots(policy: LoadedPolicy): string[] {
  const tmp = tmpdir();
  const roots = [...(policy.cwdRoots ?? []), tmp, realpathOrNull(tmp) ?? tmp];
  return [...new Set(roots)];
}
