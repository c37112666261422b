import { isIP } from 'node:net';

/**
 * Host names a sandboxed command may reach through the proxy.
 *
 * A pattern is a host name (`registry.npmjs.org`), an IP literal
 * (`127.0.0.2`, `::1`), or `*.` followed by a name with at least one dot
 * (`*.github.com`), which matches every subdomain but not the name itself.
 * Matching ignores case and a trailing dot. Anything else, a bare `*`
 * included, is rejected by {@link checkHostPattern}.
 */
export class HostAllowlist {
  readonly #exact = new Set<string>();
  readonly #suffixes: string[] = [];

  constructor(readonly patterns: readonly string[]) {
    for (const pattern of patterns) {
      const problem = checkHostPattern(pattern);
      if (problem !== null) throw new TypeError(problem);
      const name = normalizeHost(pattern.trim());
      if (name.startsWith('*.')) this.#suffixes.push(name.slice(1));
      else this.#exact.add(name);
    }
  }

  /**
   * Whether a connection to `host` may be made. `host` must be exactly a
   * host name or an IP literal: anything else (a zone id `%…`, userinfo,
   * spaces, a path) is refused, since a resolver or `net.connect` may read
   * it as something other than the name that was matched. An IP literal
   * matches only an identical entry, never a `*.` pattern.
   */
  allows(host: string): boolean {
    const name = normalizeHost(host);
    if (/[^a-z0-9._:-]/.test(name)) return false;
    if (isIpLiteral(name)) return isIP(name) !== 0 && this.#exact.has(name);
    if (!HOST_NAME.test(name)) return false;
    return this.#exact.has(name) || this.#suffixes.some((suffix) => name.endsWith(suffix));
  }
}

/** `null` when `pattern` is a valid allowlist entry, else why not. */
export function checkHostPattern(pattern: string): string | null {
  const name = normalizeHost(pattern.trim());
  if (name === '*' || name === '*.') return 'a bare "*" would allow every host; list the names instead';
  const wildcard = name.startsWith('*.');
  const rest = wildcard ? name.slice(2) : name;
  if (wildcard && !rest.includes('.')) {
    return `"${pattern}" is too broad: a wildcard needs a name with a dot after "*." (like *.example.com)`;
  }
  if (rest.includes('*')) return `"${pattern}": "*" is allowed only as a leading "*." label`;
  if (isIpLiteral(rest)) {
    if (wildcard) return `"${pattern}": an IP address takes no wildcard`;
    return isIP(rest) === 0 ? `"${pattern}" is not an IP address` : null;
  }
  if (!HOST_NAME.test(rest)) return `"${pattern}" is not a host name`;
  return null;
}

/** Dot-separated labels of letters, digits, `-` and `_`, none empty, none over 63 characters. */
const HOST_NAME = /^[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_]([a-z0-9_-]{0,62}))*$/;

function normalizeHost(host: string): string {
  let name = host.toLowerCase();
  if (name.startsWith('[') && name.endsWith(']')) name = name.slice(1, -1);
  return name.endsWith('.') && name.length > 1 ? name.slice(0, -1) : name;
}

/** Looks like an address (digits and dots, or has a colon): judged by `net.isIP`, never as a name. */
function isIpLiteral(name: string): boolean {
  return /^[\d.]+$/.test(name) || name.includes(':');
}
