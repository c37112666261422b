/** A connection through the sandbox's proxy, as reported for the audit trail. */
export interface ProxiedConnection {
  readonly host: string;
  readonly port: number;
  /** `CONNECT` for tunnels (HTTPS and other TLS), else the HTTP method. */
  readonly method: string;
  /**
   * The terminal whose credential the request carried; `null` when it
   * carried none or one that names no terminal (see `reason`).
   */
  readonly terminalId: string | null;
  /** How many connections this report stands for (1 for the first of a window; see `RefusalWindow`). */
  readonly count?: number;
  /** Set on a report that counts a window's repeats: the window's length. */
  readonly windowMs?: number;
}

/** Why the proxy refused: the allowlist, no valid credential, or the terminal's connection share. */
export type RefusalReason = 'allowlist' | 'credential' | 'connections';

/** A connection the proxy refused. */
export interface RefusedConnection extends ProxiedConnection {
  /** Default `allowlist`. */
  readonly reason?: RefusalReason;
}

/** Distinct targets kept per terminal and window; any further target of that terminal shares one bucket. */
export const MAX_REFUSAL_KEYS = 32;

/**
 * Folds a flood of reports into a bounded number, so that the audit trail
 * grows by at most `MAX_REFUSAL_KEYS + 1` records per terminal (and as many
 * for requests naming no terminal) per window, however fast a command
 * retries. Used for refused and for allowed connections alike.
 *
 * Contract:
 * - The first report of a target (terminal, reason, method, host, port) in
 *   a window is passed on at once, with `count` 1.
 * - Its repeats in that window are counted and passed on as one report with
 *   `count` (how many) and `windowMs` when the window ends, or at `close`.
 * - Past `MAX_REFUSAL_KEYS` distinct targets of one terminal in one window,
 *   its further targets are counted into one report whose host is `*` and
 *   port 0, at the window's end. One terminal's flood never pushes another
 *   terminal's reports into that bucket.
 * - `report` must not throw; what it throws is dropped (a failing observer
 *   never turns a refusal into an allow).
 */
export class RefusalWindow<T extends ProxiedConnection = RefusedConnection> {
  readonly #terminals = new Map<
    string,
    { targets: Map<string, { report: T; count: number }>; overflow: { report: T; count: number } | null }
  >();
  #timer: NodeJS.Timeout | null = null;
  #closed = false;

  constructor(
    private readonly report: (report: T) => void,
    private readonly windowMs: number,
  ) {}

  add(report: T): void {
    if (this.#closed) return;
    const who = report.terminalId ?? '';
    let terminal = this.#terminals.get(who);
    if (terminal === undefined) {
      terminal = { targets: new Map(), overflow: null };
      this.#terminals.set(who, terminal);
    }
    const reason = (report as { reason?: string }).reason ?? '';
    const key = `${reason} ${report.method} ${report.host}:${report.port}`;
    const seen = terminal.targets.get(key);
    if (seen !== undefined) seen.count += 1;
    else if (terminal.targets.size < MAX_REFUSAL_KEYS) {
      terminal.targets.set(key, { report, count: 0 });
      this.#emit({ ...report, count: 1 });
    } else {
      terminal.overflow ??= { report: { ...report, host: '*', port: 0 }, count: 0 };
      terminal.overflow.count += 1;
    }
    this.#timer ??= setTimeout(() => this.#flush(), this.windowMs).unref();
  }

  /** Reports what is counted and stops; later reports are dropped. */
  close(): void {
    this.#flush();
    this.#closed = true;
  }

  #flush(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    for (const { targets, overflow } of this.#terminals.values()) {
      for (const { report, count } of targets.values()) {
        if (count > 0) this.#emit({ ...report, count, windowMs: this.windowMs });
      }
      if (overflow !== null)
        this.#emit({ ...overflow.report, count: overflow.count, windowMs: this.windowMs });
    }
    this.#terminals.clear();
  }

  #emit(report: T): void {
    try {
      this.report(report);
    } catch {
      // The refusal stands.
    }
  }
}
