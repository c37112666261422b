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
import { AuditError, describeCause } from '../audit/audit-error.js';
import type { ChainHead } from '../audit/chain.js';
import { readChainHead } from '../audit/tail.js';

export interface CheckedFileDestinationOptions {
  /** fsync the file after every record (and its directory when the file is created). */
  readonly fsync?: boolean;
  /** Create the parent directories (mode 0700) when missing. */
  readonly mkdir?: boolean;
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
 * Contract of `write(line)`:
 * - Returns only after every byte of `line` was written (and fsynced when
 *   asked). Otherwise throws `AuditError` and, best effort, truncates the file
 *   back so that no partial line stays.
 * - Before writing it checks that the path still names the opened file with
 *   the size it left it at: a removed, renamed or replaced file, or bytes
 *   written by someone else, is `AUDIT_FILE_REPLACED` (writing on would put
 *   records where nobody will read them, or break the chain).
 * - After the first failure every `write` throws (fail-stop, like auditd's
 *   `disk_error_action = halt`): restart the server to resume auditing.
 * - Non-regular files (`/dev/full`, a FIFO, a tty) are written without the
 *   path and size checks and are never read back.
 */
export class CheckedFileDestination {
  private failure: AuditError | null = null;
  private closed = false;

  private constructor(
    readonly path: string,
    private readonly fd: number,
    private readonly fsync: boolean,
    /** dev/ino of a regular file; null for devices, FIFOs, … */
    private readonly identity: Pick<BigIntStats, 'dev' | 'ino'> | null,
    private size: bigint,
    /** The last record of the file at open, or null when it was empty or not a regular file. */
    readonly head: ChainHead | null,
  ) {}

  /**
   * Opens (creating, mode 0600) `path` for appending and reads its last
   * record. Throws `AUDIT_UNWRITABLE` when it cannot be opened and
   * `AUDIT_TAIL_CORRUPT` when its last record cannot be continued.
   */
  static open(path: string, options: CheckedFileDestinationOptions = {}): CheckedFileDestination {
    const fsync = options.fsync ?? false;
    let fd: number;
    try {
      if (options.mkdir) mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      // a+ (O_APPEND | O_RDWR | O_CREAT): append-only writes, and reads to find the chain's head.
      fd = openSync(path, 'a+', 0o600);
    } catch (error) {
      throw new AuditError('AUDIT_UNWRITABLE', `cannot open audit file ${path}: ${describeCause(error)}`, {
        cause: error,
      });
    }
    try {
      const stats = fstatSync(fd, { bigint: true });
      if (!stats.isFile()) return new CheckedFileDestination(path, fd, fsync, null, 0n, null);
      const head = readChainHead(fd, Number(stats.size), path);
      if (fsync && stats.size === 0n) fsyncDirectory(dirname(path));
      return new CheckedFileDestination(path, fd, fsync, stats, stats.size, head);
    } catch (error) {
      closeSync(fd);
      if (AuditError.is(error)) throw error;
      throw new AuditError('AUDIT_UNWRITABLE', `cannot read audit file ${path}: ${describeCause(error)}`, {
        cause: error,
      });
    }
  }

  write(line: string): void {
    if (this.closed) throw new AuditError('AUDIT_CLOSED', `audit file ${this.path} is closed`);
    if (this.failure !== null) {
      throw new AuditError(
        this.failure.code,
        `audit trail stopped after an earlier failure (restart to resume): ${this.failure.message}`,
        { cause: this.failure },
      );
    }
    this.checkStillOurs();
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
    this.size += BigInt(bytes.length);
  }

  /** Closes the fd. Idempotent; `write` afterwards throws `AUDIT_CLOSED`. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
  }

  private checkStillOurs(): void {
    if (this.identity === null) return;
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
    if (now.dev !== this.identity.dev || now.ino !== this.identity.ino) {
      throw this.fail(
        'AUDIT_FILE_REPLACED',
        `audit file ${this.path} was replaced or renamed since it was opened`,
      );
    }
    if (now.size !== this.size) {
      throw this.fail(
        'AUDIT_FILE_REPLACED',
        `audit file ${this.path} was changed by another writer (${this.size} bytes expected, ${now.size} found)`,
      );
    }
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
