import { type OtlpLogFields, otlpLogFields } from '../../otlp-fields.js';
import { type Redaction, redactRecord } from '../../redaction.js';
import type { TrailCursor } from './trail-cursor.js';
import { TrailFollower } from './trail-follower.js';

export interface TrailExporterOptions {
  /** The trail's files, oldest first; asked again on every pass (rotation). */
  readonly files: () => readonly string[];
  readonly cursor: TrailCursor;
  /** Delivers one batch; resolves once the collector accepted all of it, rejects otherwise. */
  readonly send: (logs: readonly OtlpLogFields[]) => Promise<void>;
  readonly redaction: Redaction;
  /** Records per request (default 512). */
  readonly batchSize?: number;
}

/**
 * Exports a trail from its cursor: reads the records after it
 * (`TrailFollower`, which checks the chain), redacts each, maps it to one
 * log record (`otlp-fields.ts`), sends a batch and, once the collector
 * accepted it, moves the cursor to the batch's last record. A failed send
 * leaves the cursor where it was; the next pass sends the same records
 * again (at-least-once, deduplicate by `termgate.seq`).
 *
 * It runs beside the server, never inside the gate: a slow or absent
 * collector delays only the export, never a command or its record.
 */
export class TrailExporter {
  private readonly follower: TrailFollower;
  private readonly batchSize: number;

  constructor(private readonly options: TrailExporterOptions) {
    this.follower = new TrailFollower(options.files, options.cursor.position);
    this.batchSize = options.batchSize ?? 512;
  }

  /**
   * Sends every complete record now in the trail after the cursor; resolves
   * with how many were sent. Rejects with the collector's error (the
   * records sent before stay sent, and counted in the cursor), or with a
   * `TrailChainBroken` when the trail does not chain on.
   */
  async exportAvailable(): Promise<number> {
    let sent = 0;
    for (;;) {
      const batch = this.follower.fill(this.batchSize);
      if (batch.length === 0) return sent;
      await this.options.send(
        batch.map((r) => otlpLogFields(redactRecord(r.record, this.options.redaction))),
      );
      const last = batch[batch.length - 1]!;
      this.options.cursor.advance({ seq: last.seq, hash: last.hash });
      this.follower.confirm(batch.length);
      sent += batch.length;
    }
  }
}
