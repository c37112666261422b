import {
  type BigIntStats,
  closeSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  statSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { AuditError, describeCause } from '../audit-error.js';
import type { ChainHead } from '../chain.js';
import { readAuditLinesAt } from '../line-reader.js';
import { assertRotationPolicy, isRotationDue, type RotationPolicy } from '../rotation.js';
import { isSealedRecord, openSealedLine } from '../sealed-record.js';
import { readChainTail } from '../tail.js';
import { verifyAuditLines } from '../verify.js';
import { AppendLock, type AppendLockOptions } from './append-lock.js';
import {
  continuedFile,
  filesSince,
  firstRecordTime,
  openActive,
  startFirstSegment,
  startSegment,
  verifyRange,
} from './trail-segments.js';

export interface CheckedFileDestinationOptions {
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

/** What `writeRecord` must add to the record it writes. */
export interface SegmentInfo {
  /** Set on the first record of a file that continues a rotated one: that file's name. */
  readonly prevFile?: string;
}

/**
 * A pino destination that writes each line with `fs.writeSync` on its own fd
 * and reports failure by throwing, synchronously, from `write`.
 *
 * Why not `pino.destination({sync: true})` (SonicBoom): in sync mode SonicBoom
 * reports a failed write by emitting `'error'` and keeps the failed bytes
 * queued, so they are written later, in front of the next record (checked on
 * pino 10.4 / sonic-boom 4.2 with /dev/full). An audit record the gate was
 * told had failed must never appear later, and a failure must be seen before
 * the command is spawned.
 *
 * Several writers (processes or sinks) may append to one file. Each record is
 * written by `append(knownHead, writeRecord)`:
 * - It takes the file's cross-process lock (`AppendLock`, `<path>.lock`) for
 *   the duration of this one record.
 * - Under the lock it checks that the path still names the opened file and is
 *   not shorter than we left it (`AUDIT_FILE_REPLACED` otherwise). If the
 *   file's size or mtime changed since our last record, it re-reads that
 *   record (`knownHead`) and every record appended after it by other writers,
 *   and checks that they chain exactly as `verify` does (`AUDIT_TAIL_CORRUPT`
 *   otherwise). It never writes after a tail it could not verify. (Unchanged
 *   size and mtime skip the re-read: the common, single-writer case costs one
 *   stat.)
 * - It calls `writeRecord(head)` with the head the new record must link to
 *   (the last record of the file), and `writeRecord` calls `write(line)`.
 *
 * Contract of `write(line)` (only inside `append` for a regular file):
 * - Returns only after every byte of `line` was written (and fsynced when
 *   asked). Otherwise throws `AuditError` and, best effort, truncates the file
 *   back so that no partial line stays.
 * - After the first failure every `write` and `append` throws (fail-stop,
 *   like auditd's `disk_error_action = halt`): restart the server to resume
 *   auditing. `AUDIT_LOCK_TIMEOUT` is the exception: nothing was read or
 *   written, and the next `append` tries again.
 * - Non-regular files (`/dev/full`, a FIFO, a tty) are written without lock,
 *   path and chain checks and are never read back.
 */
export class CheckedFileDestination {
  private failure: AuditError | null = null;
  private closed = false;
  private inAppend = false;
  /** When the current file's first record was written (ms), for rotation by age. */
  private startedAt: number | null = null;
  /** `prev_file` for the next record: set when the current file continues a rotated one and is still empty. */
  private pendingPrevFile: string | null = null;
  /** False while the chain's last known record is in the previous (rotated) file: this one is still empty. */
  private headInFile = true;
  private rotation: RotationPolicy | null = null;
  private now: () => Date = () => new Date();

  private constructor(
    readonly path: string,
    private fd: number,
    private readonly fsync: boolean,
    /** dev/ino of a regular file; null for devices, FIFOs, … */
    private identity: Pick<BigIntStats, 'dev' | 'ino'> | null,
    /** The file's size after the last record we know of (ours or verified). */
    private size: bigint,
    /** Where the line of that record starts. */
    private headOffset: bigint,
    /** The file's mtime (ns) as we last left it: unchanged size and mtime mean nobody else wrote. */
    private mtimeNs: bigint,
    /**
     * The last record of the trail at open, or null when it starts a new
     * trail (or is not a regular file). For an empty file next to rotated
     * ones, the last record of the newest rotated file.
     */
    readonly head: ChainHead | null,
    private readonly lock: AppendLock | null,
  ) {}

  /**
   * Opens (creating, mode 0600) `path` for appending and reads its last
   * record. Throws `AUDIT_UNWRITABLE` when it cannot be opened and
   * `AUDIT_TAIL_CORRUPT` when its last record cannot be continued.
   *
   * An empty `path` next to rotated files (`path.<stamp>`, see
   * `rotation.ts`) continues the newest one's chain, so a trail stays
   * one chain across a restart after a rotation.
   */
  static open(path: string, options: CheckedFileDestinationOptions = {}): CheckedFileDestination {
    const fsync = options.fsync ?? false;
    if (options.rotation !== undefined) assertRotationPolicy(options.rotation);
    let fd: number;
    try {
      if (options.mkdir) mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
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
      if (!first.isFile()) return new CheckedFileDestination(path, fd, fsync, null, 0n, 0n, 0n, null, null);
      // Read the tail under the lock, so that a record being written by another writer is not taken for a truncated one.
      const lock = new AppendLock(path, options.lock);
      lock.acquire();
      try {
        const stats = fstatSync(fd, { bigint: true });
        const tail = readChainTail(fd, Number(stats.size), path);
        const previous = tail === null ? continuedFile(path) : null;
        if (fsync && stats.size === 0n) fsyncDirectory(dirname(path));
        const destination = new CheckedFileDestination(
          path,
          fd,
          fsync,
          stats,
          stats.size,
          BigInt(tail?.offset ?? 0),
          stats.mtimeNs,
          tail?.head ?? previous?.head ?? null,
          lock,
        );
        destination.rotation = options.rotation ?? null;
        if (options.now !== undefined) destination.now = options.now;
        destination.pendingPrevFile = previous?.name ?? null;
        destination.headInFile = previous === null;
        destination.startedAt = firstRecordTime(fd);
        return destination;
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

  write(line: string): void {
    this.assertUsable();
    if (this.identity !== null && !this.inAppend) {
      throw new AuditError('AUDIT_WRITE_FAILED', `audit file ${this.path}: write outside append`);
    }
    const bytes = Buffer.from(line, 'utf8');
    let written = 0;
    try {
      while (written < bytes.length) {
        written += writeSync(this.fd, bytes, written, bytes.length - written);
      }
      if (this.fsync) fsyncSync(this.fd);
    } catch (error) {
      // Cut any partial line back off (a no-op when nothing was written).
      if (this.identity !== null) {
        try {
          ftruncateSync(this.fd, Number(this.size));
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
    if (this.size === 0n) this.startedAt = this.now().getTime();
    this.pendingPrevFile = null;
    this.headInFile = true;
    this.headOffset = this.size;
    this.size += BigInt(bytes.length);
    if (this.identity !== null) this.mtimeNs = fstatSync(this.fd, { bigint: true }).mtimeNs;
  }

  /**
   * Appends one record under the file's lock. `knownHead` is the last record
   * the caller's chain knows (null before the first one); `writeRecord` gets
   * the head the record must link to, which is `knownHead` unless other
   * writers appended since, and must call `write` exactly once. When the file
   * is due for rotation, it is rotated first, and the record is the first of
   * the new file: `writeRecord` then gets `prevFile`.
   */
  append(
    knownHead: ChainHead | null,
    writeRecord: (head: ChainHead | null, segment: SegmentInfo) => void,
  ): void {
    this.assertUsable();
    if (this.lock === null) {
      writeRecord(knownHead, {});
      return;
    }
    this.acquireLock(this.lock);
    try {
      const head = this.catchUp(knownHead);
      if (
        this.rotation !== null &&
        isRotationDue(this.rotation, Number(this.size), this.startedAt, this.now().getTime())
      ) {
        this.rotate();
      }
      this.inAppend = true;
      writeRecord(head, this.pendingPrevFile === null ? {} : { prevFile: this.pendingPrevFile });
    } finally {
      this.inAppend = false;
      this.lock.release();
    }
  }

  /** Closes the fd. Idempotent; `write` afterwards throws `AUDIT_CLOSED`. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
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
   * Under the lock: checks the file is still ours and that everything from our
   * last known record to the end of the file chains from `knownHead`. Returns
   * the file's last record (the head to link to). Throws (and fails the sink)
   * otherwise.
   */
  private catchUp(knownHead: ChainHead | null): ChainHead | null {
    let now: BigIntStats;
    try {
      now = statSync(this.path, { bigint: true });
    } catch (error) {
      throw this.fail(
        'AUDIT_FILE_REPLACED',
        `audit file ${this.path} is gone: ${describeCause(error)}`,
        error,
      );
    }
    if (now.dev !== this.identity?.dev || now.ino !== this.identity.ino)
      return this.followRotation(knownHead);
    return this.catchUpFile(knownHead, now);
  }

  /**
   * The path names another file than ours. That is a rotation by another
   * writer when our file is still linked and intact to its end, and the new
   * active file (through the files rotated since, by their `prev_file`)
   * continues its last record. Then we switch to the new file and return its
   * last record. Otherwise it is `AUDIT_FILE_REPLACED` (or `AUDIT_TAIL_CORRUPT`).
   */
  private followRotation(knownHead: ChainHead | null): ChainHead | null {
    const replaced = (why: string, cause?: unknown) =>
      this.fail(
        'AUDIT_FILE_REPLACED',
        `audit file ${this.path} was replaced or renamed since it was opened: ${why}`,
        cause,
      );
    const own = fstatSync(this.fd, { bigint: true });
    if (own.nlink === 0n) throw replaced('the file we wrote was removed');
    let head = this.catchUpFile(knownHead, own);
    let fd: number;
    try {
      fd = openActive(this.path);
    } catch (error) {
      throw replaced(describeCause(error), error);
    }
    let files: { fd: number; name: string }[] | null = null;
    try {
      files = filesSince(this.path, fd, head);
      if (files === null) {
        throw replaced(`the new file does not continue the chain after seq ${head?.seq ?? 0}`);
      }
      let lastOffset = 0;
      for (const file of files) {
        const checked = verifyRange(file.fd, 0, Number(fstatSync(file.fd).size), head);
        if ('problem' in checked) {
          throw this.fail(
            'AUDIT_TAIL_CORRUPT',
            `audit file ${this.path} was rotated, and ${file.name} does not chain: ${checked.problem}. Nothing was written`,
          );
        }
        head = checked.head;
        lastOffset = checked.lastOffset;
      }
      const stats = fstatSync(fd, { bigint: true });
      closeSync(this.fd);
      this.fd = fd;
      this.identity = stats;
      this.size = stats.size;
      this.mtimeNs = stats.mtimeNs;
      this.headOffset = BigInt(lastOffset);
      this.headInFile = true;
      this.startedAt = firstRecordTime(fd);
      this.pendingPrevFile = null;
      return head;
    } catch (error) {
      closeSync(fd);
      if (AuditError.is(error)) throw error;
      throw this.fail(
        'AUDIT_WRITE_FAILED',
        `cannot read rotated audit files of ${this.path}: ${describeCause(error)}`,
        error,
      );
    } finally {
      for (const file of files ?? []) if (file.fd !== fd) closeSync(file.fd);
    }
  }

  /** Continues in a new, empty segment, and points the path at it (see `rotation.ts`). */
  private rotate(): void {
    let next: { fd: number; previousName: string | null };
    try {
      next = startSegment(this.path, this.now());
    } catch (error) {
      throw this.fail(
        'AUDIT_WRITE_FAILED',
        `cannot rotate audit file ${this.path}: ${describeCause(error)}`,
        error,
      );
    }
    closeSync(this.fd);
    const stats = fstatSync(next.fd, { bigint: true });
    this.fd = next.fd;
    this.identity = stats;
    this.size = 0n;
    this.headOffset = 0n;
    this.mtimeNs = stats.mtimeNs;
    this.headInFile = false;
    this.startedAt = null;
    this.pendingPrevFile = next.previousName;
    if (this.fsync) fsyncDirectory(dirname(this.path));
  }

  /** Checks what other writers appended to our own file (`now`: its stats) since our last record. */
  private catchUpFile(knownHead: ChainHead | null, now: BigIntStats): ChainHead | null {
    // Size and mtime as we left them: no other writer appended or edited since our last record.
    if (now.size === this.size && now.mtimeNs === this.mtimeNs) return knownHead;
    if (now.size < this.size) {
      throw this.fail(
        'AUDIT_FILE_REPLACED',
        `audit file ${this.path} was truncated (${this.size} bytes expected, ${now.size} found)`,
      );
    }
    const broken = (why: string) =>
      this.fail(
        'AUDIT_TAIL_CORRUPT',
        `audit file ${this.path} was changed by another writer and does not chain: ${why}. Nothing was written; run \`termgate audit verify ${this.path}\``,
      );
    let lines: ReturnType<typeof readAuditLinesAt>;
    let head = knownHead;
    try {
      lines = readAuditLinesAt(this.fd, Number(this.headOffset), Number(now.size));
      if (knownHead !== null && this.headInFile) {
        // Our last known record must still be there, byte for byte.
        const first = lines.next();
        const opened =
          first.done === true || !first.value.terminated ? null : openSealedLine(first.value.bytes);
        if (
          opened === null ||
          !isSealedRecord(opened) ||
          opened.hash !== knownHead.hash ||
          opened.seq !== knownHead.seq
        ) {
          throw broken(`the last record known to this writer (seq ${knownHead.seq}) was changed`);
        }
      }
      if (now.size === this.size) return head;
      let lastLength = 0;
      const result = verifyAuditLines(
        (function* measured() {
          for (const line of lines) {
            lastLength = line.bytes.length + 1;
            yield line;
          }
        })(),
        knownHead,
      );
      if (!result.ok) throw broken(`at seq ${result.seq}: ${result.problem}`);
      head = result.head;
      if (result.records > 0) {
        // Another writer wrote this file's first record (with its `prev_file`): ours follows it.
        this.headInFile = true;
        this.pendingPrevFile = null;
      }
      // The chain is verified up to the end of the file; the next record links to its last line.
      this.headOffset = now.size - BigInt(lastLength);
    } catch (error) {
      if (AuditError.is(error)) throw error;
      throw this.fail(
        'AUDIT_WRITE_FAILED',
        `cannot read audit file ${this.path}: ${describeCause(error)}`,
        error,
      );
    }
    this.size = now.size;
    return head;
  }

  private fail(code: AuditError['code'], message: string, cause?: unknown): AuditError {
    this.failure = new AuditError(code, message, { cause });
    return this.failure;
  }
}

/** Makes a new file's directory entry durable. Best effort: some filesystems refuse fsync on directories. */
function fsyncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Not fatal: the file's own data is fsynced per record.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
