import { isIP } from 'node:net';

/**
 * The rule for a sandbox host allowlist entry, shared by what reads a policy
 * (which rejects a bad entry when it loads) and the sandbox's proxy (which
 * matches connections against the entries).
 *
 * A pattern is a host name (`registry.npmjs.org`), an IP literal
 * (`127.0.0.2`, `::1`), or `*.` followed by a name with at least one dot
 * (`*.github.com`), which matches every subdomain but not the name itself.
 * Matching ignores case and a trailing dot. Anything else, a bare `*`
 * included, is rejected.
 *
 * Returns `null` when `pattern` is a valid allowlist entry, else why not.
 */
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
export const HOST_NAME = /^[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_]([a-z0-9_-]{0,62}))*$/;

/** Lower case, without IPv6 brackets or a trailing dot. */
export function normalizeHost(host: string): string {
  let name = host.toLowerCase();
  if (name.startsWith('[') && name.endsWith(']')) name = name.slice(1, -1);
  return name.endsWith('.') && name.length > 1 ? name.slice(0, -1) : name;
}

/** Looks like an address (digits and dots, or has a colon): judged by `net.isIP`, never as a name. */
export function isIpLiteral(name: string): boolean {
  return /^[\d.]+$/.test(name) || name.includes(':');
}
