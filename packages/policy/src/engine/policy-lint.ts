import { isAbsolute } from 'node:path';
import { isInside } from '../policy-file/policy-paths.js';
import type { LoadedPolicy, SourcePosition } from '../policy-file/policy-types.js';
import { viewExposures } from '../sandbox/view-lint.js';
import { CASE_INSENSITIVE_NAMES } from './env-names.js';
import { writableRoots } from './writable-roots.js';
import { resolveWriteTarget } from './write-checks.js';

/** One footgun found in a valid policy. Warnings never stop a policy from loading. */
export interface PolicyWarning {
  readonly code:
    | 'interpreters-unruled'
    | 'env-case-variants'
    | 'writable-policy-file'
    | 'writable-audit-file'
    | 'sandbox-view-exposes';
  readonly message: string;
  readonly position?: SourcePosition;
}

export interface PolicyLintOptions {
  /** The audit trail the server will append to, when known. */
  readonly auditPath?: string;
}

/** Programs that run code given on their command line or stdin. */
const INTERPRETERS = ['bash', 'sh', 'python3', 'python', 'node', 'perl', 'ruby', 'php', 'deno', 'bun'];

/**
 * Footguns in a policy that loads fine (`policy check` prints them):
 * - `default: allow` with no rule naming an interpreter: `python3 -c …`,
 *   `node -e …`, `bash script` run code the policy never sees;
 * - an env.deny glob with lowercase letters and no upper-case twin: programs
 *   reading lowercase names often read both cases (`http_proxy`); the
 *   engine folds case itself only for npm_config_*;
 * - the policy file, or the audit trail, writable by the commands it judges:
 *   inside a cwd root, or a path redirections may write (writes.allow or an
 *   allowing writes.default, and no writes.deny pattern);
 * - a sandbox's readable or writable path that holds a known credential
 *   file or a credential daemon's socket place (`sandbox/view-lint.ts`).
 */
export function lintPolicy(policy: LoadedPolicy, options: PolicyLintOptions = {}): PolicyWarning[] {
  const warnings: PolicyWarning[] = [];
  if (policy.default === 'allow') {
    const named = new Set(policy.rules.flatMap((r) => r.program ?? []));
    const regexes = policy.rules.flatMap((r) => r.regex ?? []).join('\n');
    const unruled = INTERPRETERS.filter((i) => !named.has(i) && !regexes.includes(i));
    if (unruled.length === INTERPRETERS.length) {
      warnings.push({
        code: 'interpreters-unruled',
        message: `default is allow and no rule names an interpreter (${INTERPRETERS.join(', ')}): \`python3 -c …\`, \`node -e …\` or \`bash script.sh\` run code the policy never sees`,
      });
    }
  }
  const denied = new Set(policy.env.deny);
  for (const glob of policy.env.deny) {
    if (!/[a-z]/.test(glob) || denied.has(glob.toUpperCase())) continue;
    // The engine folds case itself for the names in CASE_INSENSITIVE_NAMES.
    if (CASE_INSENSITIVE_NAMES.some((c) => c.test(glob.replace(/[*?].*$/, '')) && /[*]$/.test(glob)))
      continue;
    warnings.push({
      code: 'env-case-variants',
      message: `env.deny \`${glob}\` is case-sensitive and misses \`${glob.toUpperCase()}\`: programs that read lowercase names often read both cases (curl and wget take http_proxy and HTTP_PROXY)`,
    });
  }
  const writable = writableRoots(policy).filter((r) => policy.cwdRoots?.includes(r));
  const check = (path: string, code: PolicyWarning['code'], what: string): void => {
    if (!isAbsolute(path)) return;
    const root = writable.find((r) => isInside(path, r));
    if (root !== undefined) {
      warnings.push({
        code,
        message: `${what} ${path} is inside the cwd root ${root}: a command can rewrite it`,
      });
      return;
    }
    const verdict = writeVerdict(policy, path);
    if (verdict !== null) warnings.push({ code, message: `${what} ${path} ${verdict}` });
  };
  for (const message of viewExposures(policy.sandbox))
    warnings.push({ code: 'sandbox-view-exposes', message });
  check(policy.path, 'writable-policy-file', 'the policy file');
  if (options.auditPath !== undefined) check(options.auditPath, 'writable-audit-file', 'the audit trail');
  return warnings;
}

/** Why a redirection may write `path`, or null when the policy's writes deny it. */
function writeVerdict(policy: LoadedPolicy, path: string): string | null {
  const { lexical, physical } = resolveWriteTarget({ target: path, tilde: false }, '/');
  const test = (p: { matchers: readonly RegExp[] }) =>
    p.matchers.some((m) => m.test(lexical) || m.test(physical));
  if (policy.writes.deny.some(test)) return null;
  const allowed = policy.writes.allow.find(test);
  if (allowed) return `may be written by a redirection (${allowed.id} ${allowed.pattern})`;
  if (policy.writes.default === 'ask')
    return 'may be written by a redirection a person approves (default is ask, no writes.default, and no writes.deny pattern covers it)';
  return policy.writes.default === 'allow'
    ? 'may be written by a redirection (writes.default is allow and no writes.deny pattern covers it)'
    : null;
}
