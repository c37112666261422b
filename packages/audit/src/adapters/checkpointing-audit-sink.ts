import type { KeyObject } from 'node:crypto';
import { AuditError } from '../audit-error.js';
import type { ChainHead } from '../chain.js';
import { keyId, signCheckpoint } from '../checkpoint.js';
import type { AuditEvent, AuditSink } from '../ports/audit-sink.js';
import type { CheckpointRecord } from '../record-schema.js';
import type { FileAuditSink } from './file-audit-sink.js';

export interface CheckpointOptions {
  /** The Ed25519 private key (`signing-key.ts`). */
  readonly privateKey: KeyObject;
  /** A checkpoint after this many records (default 1000). */
  readonly everyRecords?: number;
  /** A checkpoint this often (ms) when records were written since the last one (default 60 s). */
  readonly everyMs?: number;
  /** Told about a failed timed checkpoint (the sink is then failed: the next append throws too). */
  readonly onError?: (error: unknown) => void;
}

export type CheckpointReason = 'records' | 'interval' | 'stop';

/**
 * Adds signed checkpoints (`checkpoint.ts`) to a `FileAuditSink`:
 * after every `everyRecords` records, every `everyMs` when records were
 * written since the last checkpoint, and at `close` (after the stop record).
 * Each checkpoint is an `audit-checkpoint` record whose `checkpoint` member
 * signs the record before it. The one at `close` is marked final (in the
 * signed bytes), and is written whenever the trail has a record, even right
 * after another checkpoint: a trail that does not end with a final
 * checkpoint is open or cut.
 *
 * Contract: as the `AuditSink` port. A checkpoint that fails after a record
 * was written makes `append` throw (the record is in the file, the caller
 * refuses as for any audit failure), except `AUDIT_LOCK_TIMEOUT`, which
 * only postpones the checkpoint to the next record.
 */
export class CheckpointingAuditSink implements AuditSink {
  private since = 0;
  private readonly everyRecords: number;
  private readonly timer: NodeJS.Timeout;
  private readonly keyId: string;
  private closed = false;

  constructor(
    private readonly inner: FileAuditSink,
    private readonly options: CheckpointOptions,
  ) {
    this.everyRecords = options.everyRecords ?? 1000;
    const everyMs = options.everyMs ?? 60_000;
    for (const [name, value] of [
      ['everyRecords', this.everyRecords],
      ['everyMs', everyMs],
    ] as const) {
      if (!Number.isSafeInteger(value) || value <= 0) {
        throw new RangeError(`checkpoint ${name} must be a positive integer, got ${value}`);
      }
    }
    if (options.privateKey.asymmetricKeyType !== 'ed25519') {
      throw new TypeError('checkpoints are signed with an Ed25519 private key');
    }
    this.keyId = keyId(options.privateKey);
    this.timer = setInterval(() => this.onTimer(), everyMs);
    this.timer.unref();
  }

  get path(): string {
    return this.inner.path;
  }

  get head(): ChainHead | null {
    return this.inner.head;
  }

  append(event: AuditEvent): void {
    this.inner.append(event);
    this.since += 1;
    if (this.since >= this.everyRecords) this.checkpointIgnoringTimeout('records');
  }

  /**
   * Writes a checkpoint now if records were written since the last one (a
   * `stop` one, final, whenever the trail has a record). Throws what the sink throws.
   */
  checkpoint(reason: CheckpointReason): void {
    const final = reason === 'stop';
    if (this.since === 0 && !(final && this.inner.head !== null)) return;
    const record: CheckpointRecord = {
      event: {
        kind: 'event',
        category: ['file'],
        type: ['info'],
        action: 'audit-checkpoint',
        outcome: 'success',
        reason: final ? 'signed checkpoint (stop, final)' : `signed checkpoint (${reason})`,
      },
    };
    this.inner.appendCheckpoint(
      (head) => ({ ...signCheckpoint(this.options.privateKey, head, this.keyId, final) }),
      record,
    );
    this.since = 0;
  }

  /** Writes the final checkpoint, then closes the trail. Throws what the checkpoint throws, after closing. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    try {
      this.checkpoint('stop');
    } finally {
      this.inner.close();
    }
  }

  private checkpointIgnoringTimeout(reason: CheckpointReason): void {
    try {
      this.checkpoint(reason);
    } catch (error) {
      if (!(AuditError.is(error) && error.code === 'AUDIT_LOCK_TIMEOUT')) throw error;
    }
  }

  private onTimer(): void {
    try {
      this.checkpointIgnoringTimeout('interval');
    } catch (error) {
      this.options.onError?.(error);
    }
  }
}
