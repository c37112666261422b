/** A connection the proxy refused. */
export interface RefusedConnection {
  readonly host: string;
  readonly port: number;
  /** `CONNECT` for tunnels (HTTPS and other TLS), else the HTTP method. */
  readonly method: string;
  /** How many refusals this report stands for (1 for the first of a window; see `RefusalWindow`). */
  readonly count?: number;
  /** Set on a report that counts a window's repeats: the window's length. */
  readonly windowMs?: number;
}

/** Distinct refused targets kept per window; refusals of any further target share one bucket. */
export const MAX_REFUSAL_KEYS = 32;

/**
 * Folds a flood of refusals into a bounded number of reports, so that the
 * audit trail grows by at most `MAX_REFUSAL_KEYS + 1` records per window
 * however fast a command retries.
 *
 * Contract:
 * - The first refusal of a target (method, host, port) in a window is
 *   reported at once, with `count` 1.
 * - Its repeats in that window are counted and reported as one refusal with
 *   `count` (how many) and `windowMs` when the window ends, or at `close`.
 * - Past `MAX_REFUSAL_KEYS` distinct targets in one window, further targets
 *   are not reported one by one: they are counted into one report whose
 *   host is `*` and port 0, at the window's end.
 * - `report` must not throw; what it throws is dropped (a failing observer
 *   never turns a refusal into an allow).
 */
export class RefusalWindow {
  readonly #pending = new Map<string, { refused: RefusedConnection; count: number }>();
  #overflow: { method: string; count: number } | null = null;
  #timer: NodeJS.Timeout | null = null;
  #closed = false;

  constructor(
    private readonly report: (refused: RefusedConnection) => void,
    private readonly windowMs: number,
  ) {}

  add(refused: RefusedConnection): void {
    if (this.#closed) return;
    const key = `${refused.method} ${refused.host}:${refused.port}`;
    const seen = this.#pending.get(key);
    if (seen !== undefined) seen.count += 1;
    else if (this.#pending.size < MAX_REFUSAL_KEYS) {
      this.#pending.set(key, { refused, count: 0 });
      this.#emit({ ...refused, count: 1 });
    } else {
      this.#overflow ??= { method: refused.method, count: 0 };
      this.#overflow.count += 1;
    }
    this.#timer ??= setTimeout(() => this.#flush(), this.windowMs).unref();
  }

  /** Reports what is counted and stops; later refusals are dropped. */
  close(): void {
    this.#flush();
    this.#closed = true;
  }

  #flush(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    for (const { refused, count } of this.#pending.values()) {
      if (count > 0) this.#emit({ ...refused, count, windowMs: this.windowMs });
    }
    if (this.#overflow !== null) {
      this.#emit({
        host: '*',
        port: 0,
        method: this.#overflow.method,
        count: this.#overflow.count,
        windowMs: this.windowMs,
      });
    }
    this.#pending.clear();
    this.#overflow = null;
  }

  #emit(refused: RefusedConnection): void {
    try {
      this.report(refused);
    } catch {
      // The refusal stands.
    }
  }
}
