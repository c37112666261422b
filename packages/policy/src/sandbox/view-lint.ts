import { expandPolicyPath, isInside, realpathOrNull } from '../policy-file/policy-paths.js';
import type { SandboxPolicy } from '../policy-file/policy-types.js';
import { KNOWN_CREDENTIAL_FILES, KNOWN_SOCKET_PLACES } from './view-defaults.js';

/**
 * What `policy check` says about a sandbox's view: each readable or
 * writable path that is, or holds, a known credential file or a place
 * where credential daemons put their sockets (whether or not it exists on
 * this machine), unless a hidden path covers it. Compared as written and
 * with symlinks resolved.
 */
export function viewExposures(sandbox: SandboxPolicy): string[] {
  if (sandbox.mode !== 'required') return [];
  const forms = (path: string): string[] => [...new Set([path, realpathOrNull(path) ?? path])];
  const hidden = sandbox.hidden.flatMap(forms);
  const shown: [string, string][] = [
    ...(sandbox.readable ?? []).map((p): [string, string] => ['readable', p]),
    ...sandbox.writable.map((p): [string, string] => ['writable', p]),
  ];
  const messages: string[] = [];
  const check = (list: readonly string[], what: string, note = ''): void => {
    for (const [kind, path] of shown) {
      const held = list.filter((written) => {
        const known = expandPolicyPath(written);
        if (hidden.some((h) => isInside(known, h))) return false;
        return forms(path).some((p) => forms(known).some((k) => isInside(k, p)));
      });
      if (held.length === 0) continue;
      messages.push(
        `${kind} path ${path} holds ${what} (${held.join(', ')}): commands can ${kind === 'readable' ? 'read' : 'read and replace'} them${note}; narrow the path, or list them under hidden`,
      );
    }
  };
  check(KNOWN_CREDENTIAL_FILES, 'known credential files');
  check(
    KNOWN_SOCKET_PLACES,
    "credential daemons' socket places",
    ' (their sockets are covered at run time, the files beside them are not)',
  );
  return messages;
}
