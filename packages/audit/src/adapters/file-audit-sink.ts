import { AuditError } from '../audit-error.js';
import { AuditChain, type ChainHead } from '../chain.js';
import type { AuditEvent, AuditSink } from '../ports/audit-sink.js';
import { assertEventFields, type ServiceInfo } from '../record-fields.js';
import { RecordLine } from '../record-line.js';
import type { TamperingRecord } from '../record-schema.js';
import type { RotationPolicy } from '../rotation.js';
import type { AppendLockOptions } from './append-lock.js';
import { TrailFile } from './trail-file.js';
import type { TakenName } from './trail-segments.js';

export interface FileAuditSinkOptions {
  /** fsync after every record (default false: the record is in the page cache when `append` returns). */
  readonly fsync?: boolean;
  /** Create missing parent directories. */
  readonly mkdir?: boolean;
  /** `service.*` on every record. */
  readonly service?: ServiceInfo;
  /** Clock for `@timestamp` (tests). */
  readonly now?: () => Date;
  /** Limits of the cross-process append lock (`<path>.lock`); defaults 5 s wait, 10 s stale. */
  readonly lock?: AppendLockOptions;
  /** Rotate the file while running, by size and/or age (see `rotation.ts`). */
  readonly rotation?: RotationPolicy;
}

/**
 * The audit trail as a JSON Lines file, written with `fs.writeSync`.
 *
 * Each `append`, under the file's lock (`TrailFile.append`): serializes the
 * record (`record-line.ts`: the envelope, the chain's fields, the event),
 * seals it with the chain's `hash` (`chain.ts`), writes it whole, and only
 * then moves the chain on. No logger is involved: pino writes the server's
 * logs, not its trail.
 *
 * Contract (the `AuditSink` port): `append` returns after the line is in the
 * file (fsynced with `fsync: true`) and throws `AuditError` otherwise; after
 * a failure every `append` throws (except `AUDIT_LOCK_TIMEOUT` and
 * `AUDIT_INVALID_EVENT`, which wrote nothing). Records are written in call
 * order.
 *
 * Several sinks, in this or other processes, may share one file: each append
 * holds the file's lock, checks that what the others appended chains from
 * the last record this sink knows, and links its record to the file's last
 * record (see `TrailFile.append`).
 */
export class FileAuditSink implements AuditSink {
  private readonly chain: AuditChain;
  private readonly line: RecordLine;
  private readonly now: () => Date;
  private closed = false;
  private reportingTampering = false;

  private constructor(
    private readonly file: TrailFile,
    options: FileAuditSinkOptions,
  ) {
    this.chain = file.head === null ? AuditChain.start() : AuditChain.resume(file.head);
    this.line = new RecordLine(options.service);
    this.now = options.now ?? (() => new Date());
  }

  /**
   * Opens or creates the file and continues its chain (or anchors a new one
   * when it is empty). Throws `AuditError` `AUDIT_UNWRITABLE` or
   * `AUDIT_TAIL_CORRUPT`.
   */
  static open(path: string, options: FileAuditSinkOptions = {}): FileAuditSink {
    const fileOptions = {
      fsync: options.fsync ?? false,
      mkdir: options.mkdir ?? false,
      ...(options.lock === undefined ? {} : { lock: options.lock }),
      ...(options.rotation === undefined ? {} : { rotation: options.rotation }),
      ...(options.now === undefined ? {} : { now: options.now }),
    };
    return new FileAuditSink(TrailFile.open(path, fileOptions), options);
  }

  get path(): string {
    return this.file.path;
  }

  /** The last record written (or found at open), or null. */
  get head(): ChainHead | null {
    return this.chain.last;
  }

  append(event: AuditEvent): void {
    assertEventFields(event);
    this.write(event, () => ({}));
  }

  /**
   * Appends a checkpoint record: `event`, plus the top-level `checkpoint`
   * member that `sign` makes for the record the checkpoint follows (the
   * trail's last record at the moment of writing, under the file's lock).
   * See `checkpoint.ts`. Throws `AUDIT_INVALID_EVENT` on an empty trail.
   */
  appendCheckpoint(sign: (head: ChainHead) => Readonly<Record<string, unknown>>, event: AuditEvent): void {
    assertEventFields(event);
    this.write(event, (head) => {
      if (head === null) throw new AuditError('AUDIT_INVALID_EVENT', 'a checkpoint needs a record to sign');
      return { checkpoint: sign(head) };
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.file.close();
  }

  private write(
    event: AuditEvent,
    sinkFields: (head: ChainHead | null) => Readonly<Record<string, unknown>>,
  ): void {
    if (this.closed) throw new AuditError('AUDIT_CLOSED', `audit sink for ${this.path} is closed`);
    const { hash } = this.file.append(this.chain.last, (head, segment) => {
      // Another writer appended since our last record: link to the file's last record.
      if (head !== null && head !== this.chain.last) this.chain.adopt(head);
      const fields = sinkFields(this.chain.last);
      const prevFile = segment.prevFile === undefined ? {} : { prev_file: segment.prevFile };
      const unsealed = this.line.format(this.now(), {
        ...this.chain.next(),
        ...prevFile,
        ...fields,
        ...event,
      });
      return this.chain.seal(unsealed);
    });
    this.chain.commit(hash);
    // Once per append: what the tampering record's own rotation finds waits for the next append.
    if (this.reportingTampering) return;
    const planted = this.file.takePlanted();
    if (planted.length === 0) return;
    this.reportingTampering = true;
    try {
      this.write(tamperingRecord(planted), () => ({}));
    } finally {
      this.reportingTampering = false;
    }
  }
}

/**
 * `audit-tampering`: a rotation found names of the trail's next segment
 * taken by something that is not a regular file (a planted link, a
 * directory, …) and moved on to a free name.
 */
function tamperingRecord(planted: readonly TakenName[]): TamperingRecord {
  const shown = planted.slice(0, 10).map((entry) => `${entry.name} (${entry.kind})`);
  const more = planted.length > shown.length ? ` and ${planted.length - shown.length} more` : '';
  return {
    event: {
      kind: 'alert',
      category: ['file'],
      type: ['info'],
      action: 'audit-tampering',
      outcome: 'unknown',
      reason: `unexpected entries in the trail directory where the next segment was to be created: ${shown.join(', ')}${more}; skipped to a free name`,
    },
  };
}
