import { isIP } from 'node:net';
import { checkHostPattern, HOST_NAME, isIpLiteral, normalizeHost } from '../host-pattern.js';

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
