import { randomBytes, timingSafeEqual } from 'node:crypto';

/** Who a proxied request came from, as its credential says. */
export type ProxyCaller =
  | { readonly terminalId: string }
  | {
      readonly terminalId: null;
      readonly problem: 'missing' | 'unknown' | 'forged' | 'ended';
      /** For `ended`: the terminal the credential was issued to, whose command has ended. */
      readonly endedTerminalId?: string;
    };

/** Revoked credentials still recognised (and refused) so that late requests name their terminal. */
export const RETIRED_CREDENTIALS = 256;

/**
 * One secret per terminal for the sandbox's HTTP proxy. Every terminal of a
 * server shares one network namespace, so the proxy cannot tell them apart
 * by address; each gets its own proxy URL instead,
 * `http://<terminal id>:<secret>@127.0.0.1:PORT`, in its environment, and
 * its clients send it as `Proxy-Authorization: Basic …` (RFC 9110 §11.7.1;
 * curl, Python, npm, pip, Go and git do so for a proxy URL with userinfo).
 *
 * Contract:
 * - `issue` returns a fresh 144-bit secret for a terminal id (an id issued
 *   again gets a new secret; the old one stops working).
 * - `identify` names the terminal only when the header carries an issued
 *   id with its current secret (compared in constant time); otherwise it
 *   says what was wrong, and the caller must refuse: a request without a
 *   valid credential is never proxied.
 * - `revoke` ends the id: its secret no longer identifies a caller, but a
 *   request still carrying it (a connection made before the terminal ended
 *   and judged after) is told apart as `ended`, naming the terminal, for
 *   the last `RETIRED_CREDENTIALS` revoked ids.
 */
export class ProxyCredentials {
  readonly #secrets = new Map<string, Buffer>();
  readonly #retired = new Map<string, Buffer>();

  issue(terminalId: string): string {
    if (terminalId === '' || terminalId.includes(':')) {
      throw new TypeError(`a proxy credential needs an id without ":" (got ${JSON.stringify(terminalId)})`);
    }
    const secret = randomBytes(18).toString('base64url');
    this.#retired.delete(terminalId);
    this.#secrets.set(terminalId, Buffer.from(secret));
    return secret;
  }

  revoke(terminalId: string): void {
    const secret = this.#secrets.get(terminalId);
    if (secret === undefined) return;
    this.#secrets.delete(terminalId);
    this.#retired.set(terminalId, secret);
    if (this.#retired.size > RETIRED_CREDENTIALS) this.#retired.delete(this.#retired.keys().next().value!);
  }

  /** `header`: the request's `Proxy-Authorization` value, if any. */
  identify(header: string | undefined): ProxyCaller {
    const m = header === undefined ? null : /^\s*basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
    if (m === null) return { terminalId: null, problem: 'missing' };
    const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 1) return { terminalId: null, problem: 'missing' };
    // Clients percent-decode the userinfo before encoding it; ids and secrets need no escaping anyway.
    const id = decoded.slice(0, colon);
    const given = Buffer.from(decoded.slice(colon + 1));
    const secret = this.#secrets.get(id);
    if (secret === undefined) {
      const retired = this.#retired.get(id);
      return retired !== undefined && same(given, retired)
        ? { terminalId: null, problem: 'ended', endedTerminalId: id }
        : { terminalId: null, problem: 'unknown' };
    }
    if (!same(given, secret)) return { terminalId: null, problem: 'forged' };
    return { terminalId: id };
  }
}

function same(given: Buffer, secret: Buffer): boolean {
  return given.length === secret.length && timingSafeEqual(given, secret);
}

const NO_PROXY = 'localhost,127.0.0.1,::1';

/**
 * The proxy variables of one terminal, with its own credential, for the
 * proxy at `127.0.0.1:port`; both spellings: curl and Python read the
 * lower-case ones, npm and Go either. Loopback itself is never proxied.
 */
export function proxyEnvironment(terminalId: string, secret: string, port: number): Record<string, string> {
  const url = `http://${encodeURIComponent(terminalId)}:${encodeURIComponent(secret)}@127.0.0.1:${port}`;
  return {
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    ALL_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    all_proxy: url,
    NO_PROXY,
    no_proxy: NO_PROXY,
  };
}
