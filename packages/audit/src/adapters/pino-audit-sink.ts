import pino, { type Logger } from 'pino';
import { AuditError } from '../audit-error.js';
import { AuditChain, type ChainHead } from '../chain.js';
import type { AuditEvent, AuditSink } from '../ports/audit-sink.js';
import { assertEventFields, ECS_VERSION, type ServiceInfo, serviceFields } from '../record-fields.js';
import type { RotationPolicy } from '../rotation.js';
import type { AppendLockOptions } from './append-lock.js';
import { CheckedFileDestination } from './checked-file-destination.js';
import type { TakenName } from './trail-segments.js';

export interface PinoAuditSinkOptions {
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
 * The audit trail as a JSON Lines file, written through pino.
 *
 * pino does the formatting: bindings (`ecs`, `service`), `log.level`,
 * `@timestamp` and the fast serializer. Its `streamWrite` hook seals each
 * line with the chain's `hash` (see `chain.ts`). The destination is a
 * `CheckedFileDestination`: a synchronous, checked `fs.writeSync` on our own
 * fd, whose errors pino lets through to `append`.
 *
 * Contract (the `AuditSink` port): `append` returns after the line is in the
 * file (fsynced with `fsync: true`) and throws `AuditError` otherwise; after
 * a failure every `append` throws (except `AUDIT_LOCK_TIMEOUT`, which wrote
 * nothing). Records are written in call order.
 *
 * Several sinks, in this or other processes, may share one file: each append
 * holds the file's lock, checks that what the others appended chains from
 * the last record this sink knows, and links its record to the file's last
 * record (see `CheckedFileDestination.append`).
 */
export class PinoAuditSink implements AuditSink {
  private readonly logger: Logger;
  private readonly chain: AuditChain;
  private sealed: string | null = null;
  private closed = false;
  private reportingTampering = false;

  private constructor(
    private readonly destination: CheckedFileDestination,
    options: PinoAuditSinkOptions,
  ) {
    this.chain = destination.head === null ? AuditChain.start() : AuditChain.resume(destination.head);
    const now = options.now ?? (() => new Date());
    this.logger = pino(
      {
        level: 'info',
        base: { ecs: { version: ECS_VERSION }, service: serviceFields(options.service) },
        timestamp: () => `,"@timestamp":"${now().toISOString()}"`,
        formatters: { level: (label) => ({ log: { level: label } }) },
        messageKey: 'message',
        hooks: { streamWrite: (line) => this.seal(line) },
      },
      destination,
    );
  }

  /**
   * Opens or creates the file and continues its chain (or anchors a new one
   * when it is empty). Throws `AuditError` `AUDIT_UNWRITABLE` or
   * `AUDIT_TAIL_CORRUPT`.
   */
  static open(path: string, options: PinoAuditSinkOptions = {}): PinoAuditSink {
    const destinationOptions = {
      fsync: options.fsync ?? false,
      mkdir: options.mkdir ?? false,
      ...(options.lock === undefined ? {} : { lock: options.lock }),
      ...(options.rotation === undefined ? {} : { rotation: options.rotation }),
      ...(options.now === undefined ? {} : { now: options.now }),
    };
    return new PinoAuditSink(CheckedFileDestination.open(path, destinationOptions), options);
  }

  get path(): string {
    return this.destination.path;
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

  private write(
    event: AuditEvent,
    sinkFields: (head: ChainHead | null) => Readonly<Record<string, unknown>>,
  ): void {
    if (this.closed) throw new AuditError('AUDIT_CLOSED', `audit sink for ${this.path} is closed`);
    this.destination.append(this.chain.last, (head, segment) => {
      // Another writer appended since our last record: link to the file's last record.
      if (head !== null && head !== this.chain.last) this.chain.adopt(head);
      const fields = sinkFields(this.chain.last);
      this.sealed = null;
      const prevFile = segment.prevFile === undefined ? {} : { prev_file: segment.prevFile };
      this.logger.info({ ...this.chain.next(), ...prevFile, ...fields, ...event });
      // Reached only when the destination wrote the whole line.
      if (this.sealed === null) throw new AuditError('AUDIT_WRITE_FAILED', 'pino did not write the record');
      this.chain.commit(this.sealed);
    });
    // Once per append: what the tampering record's own rotation finds waits for the next append.
    if (this.reportingTampering) return;
    const planted = this.destination.takePlanted();
    if (planted.length === 0) return;
    this.reportingTampering = true;
    try {
      this.write(tamperingEvent(planted), () => ({}));
    } finally {
      this.reportingTampering = false;
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.destination.close();
  }

  private seal(line: string): string {
    const { line: sealed, hash } = this.chain.seal(line.slice(0, -1));
    this.sealed = hash;
    return `${sealed}\n`;
  }
}

/**
 * `audit-tampering`: a rotation found names of the trail's next segment
 * taken by something that is not a regular file (a planted link, a
 * directory, …) and moved on to a free name.
 */
function tamperingEvent(planted: readonly TakenName[]): AuditEvent {
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
