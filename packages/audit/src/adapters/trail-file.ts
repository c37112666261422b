import { closeSync, fstatSync, fsyncSync, ftruncateSync, openSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { AuditError, describeCause } from '../audit-error.js';
import type { ChainHead } from '../chain.js';
import { assertRotationPolicy, isRotationDue, type RotationPolicy } from '../rotation.js';
import { readChainTail } from '../tail.js';
import { AppendLock, type AppendLockOptions } from './append-lock.js';
import { assertUsablePath, fsyncDirectory, makeParentDirectories } from './audit-path.js';
import { catchUpWithOtherWriters, type WriterFile } from './other-writers.js';
import {
  continuedFile,
  firstRecordTime,
  type StartedSegment,
  startFirstSegment,
  startSegment,
  type TakenName,
} from './trail-segments.js';

export interface TrailFileOptions {
  /** fsync the file after every record (and its directory when the file is created). */
  readonly fsync?: boolean;
  /** Create the parent directories (mode 0700) when missing. */
  readonly mkdir?: boolean;
  /** Wait and staleness limits of the cross-process lock (`<path>.lock`). */
  readonly lock?: AppendLockOptions;
  /** Rotate the file by size and/or age while running (see `rotation.ts`). */
  readonly rotation?: RotationPolicy;
  /** Clock for rotation by age and rotated names (tests). */
  readonly now?: () => Date;
}

/** Where the record `append` is about to write goes. */
export interface SegmentInfo {
  /** Set on the first record of a file that continues a rotated one: that file's name. */
  readonly prevFile?: string;
}

/** What `append`'s `buildRecord` returns: the sealed line to write, without its newline. */
export interface BuiltRecord {
  readonly line: string;
}

/**
 * The file of an audit trail, appended to one record at a time with
 * `fs.writeSync` on our own fd, checked: a failed write throws before
 * `append` returns, and its bytes are cut back off. (Not SonicBoom, pino's
 * destination: in sync mode it reports a failed write by emitting `'error'`
 * and keeps the bytes queued, to write them later in front of the next
 * record, checked on pino 10.4 / sonic-boom 4.2 with /dev/full. An audit
 * record the gate was told had failed must never appear later.)
 *
 * Several writers (processes or sinks) may append to one file. Each record is
 * written by `append(knownHead, buildRecord)`:
 * - It takes the file's cross-process lock (`AppendLock`, `<path>.lock`) for
 *   the duration of this one record.
 * - Under the lock (`other-writers.ts`) it checks that the path still names the opened file and is
 *   not shorter than we left it (`AUDIT_FILE_REPLACED` otherwise). If the
 *   file's size or mtime changed since our last record, it re-reads that
 *   record (`knownHead`) and every record appended after it by other writers,
 *   and checks that they chain exactly as `verify` does (`AUDIT_TAIL_CORRUPT`
 *   otherwise). It never writes after a tail it could not verify. (Unchanged
 *   size and mtime skip the re-read: the common, single-writer case costs one
 *   stat.)
 * - It rotates the file first when rotation is due.
 * - It calls `buildRecord(head, segment)` with the head the new record must
 *   link to (the last record of the file) and writes the line it returns.
 *
 * Contract of `append`:
 * - Returns only after every byte of the line and its newline was written
 *   (and fsynced when asked). Otherwise throws `AuditError` and, best effort,
 *   truncates the file back so that no partial line stays.
 * - After the first failure every `append` throws (fail-stop, like auditd's
 *   `disk_error_action = halt`): restart the server to resume auditing.
 *   `AUDIT_LOCK_TIMEOUT` is the exception: nothing was read or written, and
 *   the next `append` tries again. So is an error `buildRecord` throws:
 *   nothing was written.
 * - Non-regular files (`/dev/full`, a FIFO, a tty) are written without lock,
 *   path and chain checks and are never read back.
 */
export class TrailFile {
  private failure: AuditError | null = null;
  private closed = false;
  private rotation: RotationPolicy | null = null;
  private now: () => Date = () => new Date();
  /** Names rotation skipped because something planted was there, not yet reported. */
  private planted: TakenName[] = [];

  private constructor(
    /** The file written now, as we last left it (see `other-writers.ts`). */
    private readonly file: WriterFile,
    private readonly fsync: boolean,
    /**
     * The last record of the trail at open, or null when it starts a new
     * trail (or is not a regular file). For an empty file next to rotated
     * ones, the last record of the newest rotated file.
     */
    readonly head: ChainHead | null,
    private readonly lock: AppendLock | null,
  ) {}

  get path(): string {
    return this.file.path;
  }

  /**
   * Opens (creating, mode 0600) `path` for appending and reads its last
   * record. Throws `AUDIT_UNWRITABLE` when it cannot be opened and
   * `AUDIT_TAIL_CORRUPT` when its last record cannot be continued.
   *
   * An empty `path` next to rotated files (`path.<stamp>`, see
   * `rotation.ts`) continues the newest one's chain, so a trail stays
   * one chain across a restart after a rotation.
   */
  static open(path: string, options: TrailFileOptions = {}): TrailFile {
    const fsync = options.fsync ?? false;
    if (options.rotation !== undefined) assertRotationPolicy(options.rotation);
    let fd: number;
    try {
      assertUsablePath(path);
      if (options.mkdir) makeParentDirectories(dirname(path));
      if (options.rotation !== undefined)
        startFirstSegment(path, options.lock, options.now ?? (() => new Date()));
      // a+ (O_APPEND | O_RDWR | O_CREAT): append-only writes, and reads to find the chain's head.
      fd = openSync(path, 'a+', 0o600);
    } catch (error) {
      throw new AuditError('AUDIT_UNWRITABLE', `cannot open audit file ${path}: ${describeCause(error)}`, {
        cause: error,
      });
    }
    try {
      const first = fstatSync(fd, { bigint: true });
      if (!first.isFile()) return new TrailFile(writerFile(path, fd, null, 0n, 0n), fsync, null, null);
      // Read the tail under the lock, so that a record being written by another writer is not taken for a truncated one.
      const lock = new AppendLock(path, options.lock);
      lock.acquire();
      try {
        const stats = fstatSync(fd, { bigint: true });
        const tail = readChainTail(fd, Number(stats.size), path);
        const previous = tail === null ? continuedFile(path) : null;
        if (fsync && stats.size === 0n) fsyncDirectory(dirname(path));
        const file = writerFile(path, fd, stats, stats.size, stats.mtimeNs);
        file.headOffset = BigInt(tail?.offset ?? 0);
        file.pendingPrevFile = previous?.name ?? null;
        file.headInFile = previous === null;
        file.startedAt = firstRecordTime(fd);
        const trail = new TrailFile(file, fsync, tail?.head ?? previous?.head ?? null, lock);
        trail.rotation = options.rotation ?? null;
        if (options.now !== undefined) trail.now = options.now;
        return trail;
      } finally {
        lock.release();
      }
    } catch (error) {
      closeSync(fd);
      if (AuditError.is(error)) throw error;
      throw new AuditError('AUDIT_UNWRITABLE', `cannot read audit file ${path}: ${describeCause(error)}`, {
        cause: error,
      });
    }
  }

  /**
   * Appends one record under the file's lock. `knownHead` is the last record
   * the caller's chain knows (null before the first one); `buildRecord` gets
   * the head the record must link to, which is `knownHead` unless other
   * writers appended since, and returns the sealed line. When the file is
   * due for rotation, it is rotated first, and the record is the first of
   * the new file: `buildRecord` then gets `prevFile`. Returns what
   * `buildRecord` returned, once the line is written.
   */
  append<Built extends BuiltRecord>(
    knownHead: ChainHead | null,
    buildRecord: (head: ChainHead | null, segment: SegmentInfo) => Built,
  ): Built {
    this.assertUsable();
    if (this.lock === null) {
      const built = buildRecord(knownHead, {});
      this.writeLine(built.line);
      return built;
    }
    this.acquireLock(this.lock);
    try {
      const head = this.catchUp(knownHead);
      if (
        this.rotation !== null &&
        isRotationDue(this.rotation, Number(this.file.size), this.file.startedAt, this.now().getTime())
      ) {
        this.rotate();
      }
      const built = buildRecord(
        head,
        this.file.pendingPrevFile === null ? {} : { prevFile: this.file.pendingPrevFile },
      );
      this.writeLine(built.line);
      return built;
    } finally {
      this.lock.release();
    }
  }

  /** Closes the fd. Idempotent; `append` afterwards throws `AUDIT_CLOSED`. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.file.fd);
  }

  /** Writes `line` and its newline, whole (fsynced when asked), or cuts it back off and fails the trail. */
  private writeLine(line: string): void {
    const bytes = Buffer.from(`${line}\n`, 'utf8');
    let written = 0;
    try {
      while (written < bytes.length) {
        written += writeSync(this.file.fd, bytes, written, bytes.length - written);
      }
      if (this.fsync) fsyncSync(this.file.fd);
    } catch (error) {
      // Cut any partial line back off (a no-op when nothing was written).
      if (this.file.identity !== null) {
        try {
          ftruncateSync(this.file.fd, Number(this.file.size));
        } catch {
          // The partial line stays; `audit verify` will name it.
        }
      }
      throw this.fail(
        'AUDIT_WRITE_FAILED',
        `write to audit file ${this.path} failed: ${describeCause(error)}`,
        error,
      );
    }
    if (this.file.size === 0n) this.file.startedAt = this.now().getTime();
    this.file.pendingPrevFile = null;
    this.file.headInFile = true;
    this.file.headOffset = this.file.size;
    this.file.size += BigInt(bytes.length);
    if (this.file.identity !== null) this.file.mtimeNs = fstatSync(this.file.fd, { bigint: true }).mtimeNs;
  }

  /** Takes the lock. A timeout leaves the sink usable; any other failure fails it. */
  private acquireLock(lock: AppendLock): void {
    try {
      lock.acquire();
    } catch (error) {
      if (AuditError.is(error) && error.code === 'AUDIT_LOCK_TIMEOUT') throw error;
      try {
        statSync(this.path);
      } catch (gone) {
        throw this.fail(
          'AUDIT_FILE_REPLACED',
          `audit file ${this.path} is gone: ${describeCause(gone)}`,
          gone,
        );
      }
      throw this.fail('AUDIT_WRITE_FAILED', describeCause(error), error);
    }
  }

  private assertUsable(): void {
    if (this.closed) throw new AuditError('AUDIT_CLOSED', `audit file ${this.path} is closed`);
    if (this.failure !== null) {
      throw new AuditError(
        this.failure.code,
        `audit trail stopped after an earlier failure (restart to resume): ${this.failure.message}`,
        { cause: this.failure },
      );
    }
  }

  /**
   * Under the lock: checks the file is still ours and that everything other
   * writers appended since our last record chains from `knownHead`; follows
   * their rotation. Returns the head to link to. Any problem fails the sink.
   */
  private catchUp(knownHead: ChainHead | null): ChainHead | null {
    try {
      return catchUpWithOtherWriters(this.file, knownHead);
    } catch (error) {
      this.failure = AuditError.is(error)
        ? error
        : new AuditError('AUDIT_WRITE_FAILED', `audit file ${this.path}: ${describeCause(error)}`, {
            cause: error,
          });
      throw this.failure;
    }
  }

  /**
   * The names rotations skipped since the last call because something that
   * is not a regular file was there (see `startSegment`): tampering, for the
   * sink to record.
   */
  takePlanted(): TakenName[] {
    const planted = this.planted;
    this.planted = [];
    return planted;
  }

  /** Continues in a new, empty segment, and points the path at it (see `rotation.ts`). */
  private rotate(): void {
    let next: StartedSegment;
    try {
      next = startSegment(this.path, this.now());
    } catch (error) {
      throw this.fail(
        'AUDIT_WRITE_FAILED',
        `cannot rotate audit file ${this.path}: ${describeCause(error)}`,
        error,
      );
    }
    closeSync(this.file.fd);
    const stats = fstatSync(next.fd, { bigint: true });
    this.file.fd = next.fd;
    this.file.identity = stats;
    this.file.size = 0n;
    this.file.headOffset = 0n;
    this.file.mtimeNs = stats.mtimeNs;
    this.file.headInFile = false;
    this.file.startedAt = null;
    this.file.pendingPrevFile = next.previousName;
    this.planted.push(...next.planted);
    if (this.fsync) fsyncDirectory(dirname(this.path));
  }

  private fail(code: AuditError['code'], message: string, cause?: unknown): AuditError {
    this.failure = new AuditError(code, message, { cause });
    return this.failure;
  }
}

function writerFile(
  path: string,
  fd: number,
  identity: WriterFile['identity'],
  size: bigint,
  mtimeNs: bigint,
): WriterFile {
  return {
    path,
    fd,
    identity,
    size,
    headOffset: 0n,
    mtimeNs,
    headInFile: true,
    pendingPrevFile: null,
    startedAt: null,
  };
}
