import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { AuditError, describeCause } from '../audit-error.js';

export interface AppendLockOptions {
  /** How long `acquire` waits for another holder before it gives up (default 5 s). */
  readonly waitMs?: number;
  /** A lock older than this is taken over even if its holder may be alive (default 10 s). */
  readonly staleMs?: number;
}

interface LockOwner {
  readonly pid: number;
  readonly host: string;
  readonly token: string;
}

/** A lock file whose content never became readable is stale after this (its creator writes it right away). */
const EMPTY_STALE_MS = 2_000;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/**
 * A cross-process advisory lock for appending to one file: an exclusive lock
 * file `<path>.lock`, created with `O_CREAT | O_EXCL` (`openSync(…, 'wx')`),
 * holding `{pid, host, token}`. Synchronous, because the audit sink's
 * `append` is: Node has no `flock(2)` in core, and `proper-lockfile` is
 * asynchronous.
 *
 * - `acquire` retries with a short, growing sleep (`Atomics.wait`) and throws
 *   `AUDIT_LOCK_TIMEOUT` after `waitMs`.
 * - A lock is stale when its holder is a dead pid on this host, when it is
 *   older than `staleMs` (a hung holder, a reused pid, another host), or when
 *   it stayed empty for 2 s (the creator died before writing it). A stale
 *   lock is removed under a second lock file, `<path>.lock.break`, after
 *   checking that it is still the same file with the same content, so that
 *   two waiters cannot both remove it and end up both holding a lock.
 * - `release` removes the lock only if it still holds our token.
 *
 * Held only around one append (microseconds to an fsync), never across
 * awaits. Advisory: a writer that ignores it is caught by the chain check
 * the sink does under the lock.
 */
export class AppendLock {
  readonly lockPath: string;
  private readonly waitMs: number;
  private readonly staleMs: number;
  private token: string | null = null;
  /** Inode of the lock file we created, to release only our own without reading it back. */
  private heldIno: bigint | null = null;
  /** Tokens are this process's random prefix plus a counter: unique, and cheap on the append path. */
  private readonly tokenPrefix = randomBytes(8).toString('hex');
  private tokenCounter = 0;

  constructor(path: string, options: AppendLockOptions = {}) {
    this.lockPath = `${path}.lock`;
    this.waitMs = options.waitMs ?? 5_000;
    this.staleMs = options.staleMs ?? 10_000;
  }

  get held(): boolean {
    return this.token !== null;
  }

  acquire(): void {
    if (this.token !== null) throw new Error(`append lock ${this.lockPath} is already held`);
    const deadline = Date.now() + this.waitMs;
    let pause = 1;
    for (;;) {
      const token = `${this.tokenPrefix}-${++this.tokenCounter}`;
      const ino = createExclusive(this.lockPath, ownerText(token), this.lockPath);
      if (ino !== null) {
        this.token = token;
        this.heldIno = ino;
        return;
      }
      if (this.breakIfStale()) continue;
      if (Date.now() >= deadline) {
        throw new AuditError(
          'AUDIT_LOCK_TIMEOUT',
          `audit file lock ${this.lockPath} is held by ${describeOwner(this.lockPath)} for more than ${this.waitMs} ms; nothing was written`,
        );
      }
      Atomics.wait(sleeper, 0, 0, pause + Math.random() * pause);
      pause = Math.min(pause * 2, 10);
    }
  }

  release(): void {
    const ino = this.heldIno;
    if (this.token === null || ino === null) return;
    this.token = null;
    this.heldIno = null;
    try {
      // Still the file we created (not a successor's, after ours was broken as stale)?
      if (statSync(this.lockPath, { bigint: true }).ino === ino) unlinkSync(this.lockPath);
    } catch {
      // Already gone (taken over as stale): nothing to release.
    }
  }

  /** Removes the lock file if it is stale. Returns true when it did (retry at once). */
  private breakIfStale(): boolean {
    const seen = inspect(this.lockPath);
    if (seen === null) return true; // released meanwhile
    if (!this.isStale(seen)) return false;
    const breaker = `${this.lockPath}.break`;
    if (createExclusive(breaker, ownerText('break'), this.lockPath) === null) {
      // Someone else is breaking it; a breaker left behind by a crash goes after staleMs.
      const other = inspect(breaker);
      if (other !== null && Date.now() - other.mtimeMs > this.staleMs) tryUnlink(breaker);
      return false;
    }
    try {
      const again = inspect(this.lockPath);
      if (again === null) return true;
      if (again.ino !== seen.ino || again.text !== seen.text) return false;
      tryUnlink(this.lockPath);
      return true;
    } finally {
      tryUnlink(breaker);
    }
  }

  private isStale(seen: { text: string; mtimeMs: number }): boolean {
    const age = Date.now() - seen.mtimeMs;
    if (age > this.staleMs) return true;
    const owner = parseOwner(seen.text);
    if (owner === null) return age > EMPTY_STALE_MS;
    return owner.host === HOST && owner.pid !== process.pid && !isAlive(owner.pid);
  }
}

const HOST = hostname();

function ownerText(token: string): string {
  return `${JSON.stringify({ pid: process.pid, host: HOST, token })}\n`;
}

/**
 * Creates `path` exclusively with `text` and returns its inode; null when it
 * exists. Throws `AUDIT_UNWRITABLE` on any other error.
 */
function createExclusive(path: string, text: string, lockPath: string): bigint | null {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return null;
    throw new AuditError(
      'AUDIT_UNWRITABLE',
      `cannot create audit file lock ${lockPath}: ${describeCause(error)}`,
      { cause: error },
    );
  }
  try {
    writeSync(fd, text);
    return fstatSync(fd, { bigint: true }).ino;
  } finally {
    closeSync(fd);
  }
}

function inspect(path: string): { ino: bigint; mtimeMs: number; text: string } | null {
  try {
    const stats = statSync(path, { bigint: true });
    return { ino: stats.ino, mtimeMs: Number(stats.mtimeMs), text: readFileSync(path, 'utf8') };
  } catch {
    return null;
  }
}

function parseOwner(text: string): LockOwner | null {
  try {
    const value = JSON.parse(text) as Partial<LockOwner>;
    if (typeof value.pid !== 'number' || typeof value.host !== 'string' || typeof value.token !== 'string') {
      return null;
    }
    return value as LockOwner;
  } catch {
    return null;
  }
}

function describeOwner(path: string): string {
  const seen = inspect(path);
  const owner = seen === null ? null : parseOwner(seen.text);
  return owner === null ? 'another writer' : `pid ${owner.pid} on ${owner.host}`;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function tryUnlink(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Gone already.
  }
}
