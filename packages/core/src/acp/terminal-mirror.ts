import type { CallerContext, ExitStatus, TerminalHost, TerminalOutput } from '@termgate/termhost';

/** 64 KiB of the newest output per embedded terminal. */
export const DEFAULT_DISPLAY_BYTES = 64 * 1024;

/** The line the display text ends with once the command exited. */
export function exitLine(status: ExitStatus): string {
  const how =
    status.exitCode !== null
      ? `exited with code ${status.exitCode}`
      : `terminated by ${status.signal ?? 'an unknown signal'}`;
  return status.timedOut ? `[timed out; ${how}]` : `[${how}]`;
}

/** The marker that starts the display text when older output was dropped. */
export const OMITTED_MARKER = '[… earlier output omitted]\n';

/**
 * A live, display-only copy of one terminal's output, for an editor that
 * cannot read the terminal itself. It costs two gated calls on the host per
 * terminal (one `output` snapshot, one `wait` that streams every later byte),
 * not one per refresh, so the audit trail is not flooded by the display.
 *
 * Its text is the newest `maxBytes` of output (cut at a character boundary,
 * preceded by {@link OMITTED_MARKER} when anything was dropped), followed by
 * an {@link exitLine} once the command exited. It keeps its last text after
 * the terminal is released.
 */
export class TerminalMirror {
  private display: Buffer = Buffer.alloc(0);
  private dropped = false;
  /** Total bytes the display accounts for; `null` until the first snapshot. */
  private covered: number | null = null;
  /** Chunks that arrived before a snapshot covered them; bounded, see `hold`. */
  private pending: { chunk: Uint8Array; total: number }[] = [];
  private pendingBytes = 0;
  private exit: ExitStatus | null = null;
  private unavailable: string | null = null;
  private resyncing = false;
  private readonly controller = new AbortController();
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly host: TerminalHost,
    readonly terminalId: string,
    private readonly caller: CallerContext,
    private readonly maxBytes: number = DEFAULT_DISPLAY_BYTES,
  ) {}

  /** Subscribes first, then snapshots: bytes between the two are reconciled by their running totals. */
  start(): void {
    this.host
      .waitForExit(
        this.terminalId,
        { signal: this.controller.signal, onOutput: (chunk, total) => this.chunk(chunk, total) },
        this.caller,
      )
      .then(
        (status) => {
          this.exit = status;
          this.changed();
        },
        (error: unknown) => {
          if (!this.controller.signal.aborted) this.fail(error);
        },
      );
    this.snapshot();
  }

  /** Stops following the terminal; the text stays as it is. */
  stop(): void {
    this.controller.abort();
    this.listeners.clear();
  }

  get exited(): boolean {
    return this.exit !== null;
  }

  /** Nothing more will change: the command exited, or the terminal could not be read. */
  get settled(): boolean {
    return this.exit !== null || this.unavailable !== null;
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  text(): string {
    if (this.unavailable !== null && this.covered === null && this.exit === null) {
      return `[terminal output unavailable: ${this.unavailable}]`;
    }
    let start = 0;
    while (start < this.display.length && (this.display[start]! & 0xc0) === 0x80) start++;
    let text = this.display.subarray(start).toString('utf8');
    if (this.dropped) text = `${OMITTED_MARKER}${text}`;
    if (this.exit !== null) text += `${text === '' || text.endsWith('\n') ? '' : '\n'}${exitLine(this.exit)}`;
    return text;
  }

  private snapshot(): void {
    this.host.output(this.terminalId, this.caller).then(
      (snapshot) => this.applySnapshot(snapshot),
      (error: unknown) => this.fail(error),
    );
  }

  private applySnapshot(snapshot: TerminalOutput): void {
    this.resyncing = false;
    if (this.covered !== null && snapshot.totalBytes < this.covered) return;
    this.display = Buffer.from(snapshot.output, 'utf8');
    this.dropped ||= snapshot.truncated;
    this.covered = snapshot.totalBytes;
    const pending = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    for (const { chunk, total } of pending) this.append(chunk, total);
    this.trim();
    this.changed();
  }

  private chunk(chunk: Uint8Array, total: number): void {
    if (this.unavailable !== null) return;
    if (this.covered === null || this.resyncing) {
      this.hold(chunk, total);
      return;
    }
    this.append(chunk, total);
    this.trim();
    this.changed();
  }

  private append(chunk: Uint8Array, total: number): void {
    if (this.resyncing) {
      this.hold(chunk, total);
      return;
    }
    const covered = this.covered!;
    if (total <= covered) return;
    const start = total - chunk.length;
    if (start > covered) {
      // Bytes went by between the snapshot and the subscription: take a fresh snapshot.
      this.resyncing = true;
      this.hold(chunk, total);
      this.snapshot();
      return;
    }
    this.display = Buffer.concat([this.display, chunk.subarray(covered - start)]);
    this.covered = total;
  }

  private trim(): void {
    if (this.display.length <= this.maxBytes) return;
    this.display = this.display.subarray(this.display.length - this.maxBytes);
    this.dropped = true;
  }

  /**
   * Keeps a chunk until a snapshot covers it. Only the newest bytes matter for
   * the display, so older held chunks are dropped past twice the display
   * size; a gap that leaves is healed by the next snapshot (see `append`).
   */
  private hold(chunk: Uint8Array, total: number): void {
    this.pending.push({ chunk, total });
    this.pendingBytes += chunk.length;
    while (this.pendingBytes > 2 * this.maxBytes && this.pending.length > 1) {
      this.pendingBytes -= this.pending.shift()!.chunk.length;
    }
  }

  /** The terminal cannot be read (refused, released, unknown): stop following it and hold nothing. */
  private fail(error: unknown): void {
    this.unavailable ??= error instanceof Error ? error.message : String(error);
    this.pending = [];
    this.pendingBytes = 0;
    this.controller.abort();
    this.changed();
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }
}
