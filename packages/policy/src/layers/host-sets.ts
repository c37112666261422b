/**
 * Host allowlist patterns (`checkHostPattern`'s grammar: a name, an IP
 * literal, or `*.` and a name with a dot, matching every subdomain but not
 * the name itself) intersected: the result allows a host only when both
 * lists allow it. For each pair, the narrower pattern is kept when one
 * covers the other; two patterns that only overlap partly cannot overlap in
 * this grammar (a name is covered or not; two wildcards nest or are disjoint).
 */
export function intersectHosts(a: readonly string[], b: readonly string[]): string[] {
  const out: string[] = [];
  for (const x of a) {
    for (const y of b) {
      const narrower = covers(y, x) ? x : covers(x, y) ? y : null;
      if (narrower !== null && !out.includes(narrower)) out.push(narrower);
    }
  }
  return out;
}

/** The entries of `wanted` that no pattern of `allowed` covers. */
export function hostsOutside(wanted: readonly string[], allowed: readonly string[]): string[] {
  return wanted.filter((w) => !allowed.some((a) => covers(a, w)));
}

/** Every host `inner` matches, `outer` matches too. */
export function covers(outer: string, inner: string): boolean {
  const o = normalizeHost(outer);
  const i = normalizeHost(inner);
  if (o === i) return true;
  if (!o.startsWith('*.')) return false;
  const suffix = o.slice(1); // ".example.com"
  // `*.example.com` covers `a.example.com` and `*.a.example.com`, not `example.com` nor `*.example.com`'s parent.
  const name = i.startsWith('*.') ? i.slice(2) : i;
  return name.endsWith(suffix) && name.length > suffix.length;
}

/** Lower case, without IPv6 brackets or a trailing dot (as the proxy matches). */
function normalizeHost(host: string): string {
  let name = host.toLowerCase();
  if (name.startsWith('[') && name.endsWith(']')) name = name.slice(1, -1);
  return name.endsWith('.') && name.length > 1 ? name.slice(0, -1) : name;
}
