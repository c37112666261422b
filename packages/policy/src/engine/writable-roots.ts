import { tmpdir } from 'node:os';
import { realpathOrNull } from '../policy-file/policy-paths.js';
import type { LoadedPolicy } from '../policy-file/policy-types.js';

/**
 * The directories a command judged under `policy` may write into, as far
 * as the policy says: its cwd roots (where lines run), the temporary
 * directory, and, when the sandbox is on, its writable directories (the
 * package caches of the default policy among them). A program found inside
 * one is not trusted by name (anything running there could have put it
 * there). The one place this is computed.
 */
export function writableRoots(policy: LoadedPolicy): string[] {
  const tmp = tmpdir();
  const sandboxed = policy.sandbox.mode === 'required' ? policy.sandbox.writable : [];
  const roots = [...(policy.cwdRoots ?? []), tmp, realpathOrNull(tmp) ?? tmp, ...sandboxed];
  return [...new Set(roots)];
}
