import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/** How long a sealed `requestState` is accepted by default: 5 minutes. */
export const DEFAULT_REQUEST_STATE_TTL_MS = 5 * 60_000;

/** What a `requestState` binds: the call it was issued for and the question it carries. */
export interface RequestStateClaims {
  /** The tool the state was issued for. */
  readonly tool: string;
  /** {@link argumentsDigest} of that call's arguments. */
  readonly argumentsDigest: string;
  /** The approval id of the question (the audit trail's `termgate.approval.id`). */
  readonly approvalId: string;
}

export type RequestStateProblem = 'malformed' | 'tampered' | 'expired' | 'replayed' | 'mismatched';

export type OpenedRequestState =
  | { readonly ok: true; readonly claims: RequestStateClaims }
  | { readonly ok: false; readonly problem: RequestStateProblem };

export interface RequestStateSealerOptions {
  /** Default {@link DEFAULT_REQUEST_STATE_TTL_MS}. */
  readonly ttlMs?: number;
  /** Wall clock in ms (injectable for tests). Default `Date.now`. */
  readonly now?: () => number;
}

const PREFIX = 'tg1.';
const IV_BYTES = 12;
const TAG_BYTES = 16;

interface Payload {
  readonly v: 1;
  /** Unique per state: what single use is tracked by. */
  readonly sid: string;
  readonly tool: string;
  readonly args: string;
  readonly aid: string;
  /** Expiry, ms since the epoch. */
  readonly exp: number;
}

/**
 * Seals and opens MCP 2026-07-28 `requestState` values (an `input_required`
 * round trip's opaque state), which a client echoes back and which an
 * attacker controls.
 *
 * Contract:
 * - A state is AES-256-GCM under a key drawn when this object is made (per
 *   process; never written anywhere). Anything that does not decrypt and
 *   authenticate is `tampered` (or `malformed` when it is not even shaped like one).
 * - It binds the tool, a digest of the exact arguments, the approval id, and
 *   an expiry (`ttlMs` after sealing).
 * - Single use: a state that opened successfully is remembered until it
 *   expires; opening it again is `replayed`.
 * - `open` checks, in order: shape, integrity, expiry, binding, reuse. It
 *   consumes the state only when every check passed.
 */
export class RequestStateSealer {
  readonly #key = randomBytes(32);
  readonly #ttlMs: number;
  readonly #now: () => number;
  /** Consumed state ids and their expiry. */
  readonly #consumed = new Map<string, number>();

  constructor(options: RequestStateSealerOptions = {}) {
    this.#ttlMs = options.ttlMs ?? DEFAULT_REQUEST_STATE_TTL_MS;
    this.#now = options.now ?? Date.now;
  }

  seal(claims: RequestStateClaims): string {
    const payload: Payload = {
      v: 1,
      sid: randomBytes(16).toString('base64url'),
      tool: claims.tool,
      args: claims.argumentsDigest,
      aid: claims.approvalId,
      exp: this.#now() + this.#ttlMs,
    };
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    const sealed = Buffer.concat([cipher.update(JSON.stringify(payload), 'utf8'), cipher.final()]);
    return PREFIX + Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString('base64url');
  }

  /** Verifies `state` for a call of `tool` with arguments of digest `argumentsDigest`, and consumes it. */
  open(state: unknown, tool: string, argumentsDigest: string): OpenedRequestState {
    if (typeof state !== 'string' || !state.startsWith(PREFIX)) return { ok: false, problem: 'malformed' };
    const bytes = Buffer.from(state.slice(PREFIX.length), 'base64url');
    if (bytes.length <= IV_BYTES + TAG_BYTES) return { ok: false, problem: 'malformed' };
    let payload: Payload;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, bytes.subarray(0, IV_BYTES));
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
      const plain = Buffer.concat([
        decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)),
        decipher.final(),
      ]);
      payload = JSON.parse(plain.toString('utf8')) as Payload;
    } catch {
      return { ok: false, problem: 'tampered' };
    }
    const now = this.#now();
    this.#prune(now);
    if (!(payload.exp > now)) return { ok: false, problem: 'expired' };
    if (payload.tool !== tool || payload.args !== argumentsDigest)
      return { ok: false, problem: 'mismatched' };
    if (this.#consumed.has(payload.sid)) return { ok: false, problem: 'replayed' };
    this.#consumed.set(payload.sid, payload.exp);
    return {
      ok: true,
      claims: { tool: payload.tool, argumentsDigest: payload.args, approvalId: payload.aid },
    };
  }

  #prune(now: number): void {
    for (const [sid, exp] of this.#consumed) if (exp <= now) this.#consumed.delete(sid);
  }
}

/**
 * sha256 of a tool's arguments in a canonical JSON form (object keys sorted,
 * at every depth), so that a state binds the exact arguments whatever order
 * the client writes them in.
 */
export function argumentsDigest(tool: string, args: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify([tool, canonical(args)]))
    .digest('hex');
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort())
      out[key] = canonical((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}
