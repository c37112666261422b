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
      const name = normalizeHost(pattern);
      if (name.startsWith('*.')) this.#suffixes.push(name.slice(1));
      else this.#exact.add(name);
    }
  }

  allows(host: string): boolean {
    const name = normalizeHost(host);
    if (name === '' || /[\s/@]/.test(name)) return false;
    return this.#exact.has(name) || this.#suffixes.some((suffix) => name.endsWith(suffix));
  }
}

/** `null` when `pattern` is a valid allowlist entry, else why not. */
export function checkHostPattern(pattern: string): string | null {
  const name = normalizeHost(pattern);
  if (name === '*' || name === '*.') return 'a bare "*" would allow every host; list the names instead';
  const wildcard = name.startsWith('*.');
  const rest = wildcard ? name.slice(2) : name;
  if (wildcard && !rest.includes('.')) {
    return `"${pattern}" is too broad: a wildcard needs a name with a dot after "*." (like *.example.com)`;
  }
  if (rest.includes('*')) return `"${pattern}": "*" is allowed only as a leading "*." label`;
  if (isIpLiteral(rest)) return wildcard ? `"${pattern}": an IP address takes no wildcard` : null;
  if (!/^[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_]([a-z0-9_-]{0,62}))*$/.test(rest)) {
    return `"${pattern}" is not a host name`;
  }
  return null;
}

function normalizeHost(host: string): string {
  let name = host.trim().toLowerCase();
  if (name.startsWith('[') && name.endsWith(']')) name = name.slice(1, -1);
  return name.endsWith('.') && name.length > 1 ? name.slice(0, -1) : name;
}

function isIpLiteral(name: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(name) || (name.includes(':') && /^[0-9a-f:.]+$/.test(name));
}
