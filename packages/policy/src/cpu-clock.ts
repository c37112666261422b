import { closeSync, openSync, readFileSync, readSync } from 'node:fs';

/**
 * Clock ticks per second of the times in `/proc/<pid>/task/<tid>/stat`:
 * the kernel's `USER_HZ`, which is 100 on every architecture Linux
 * exports it for except alpha (proc_pid_stat(5), `getconf CLK_TCK`).
 */
const USER_HZ = 100;

/** The stat line is one short line (well under 1 KiB); the fields read are near its start. */
const STAT_BYTES = 1024;

/**
 * The CPU time (user + system) one Linux thread has used, read from procfs
 * (`/proc/<pid>/task/<tid>/stat`, fields 14 and 15; proc_pid_stat(5)),
 * in milliseconds, at the kernel's 10 ms tick resolution.
 *
 * A budget that is meant to bound *work* (a parse, a judgement) is spent
 * only while the thread runs; wall-clock time also runs while a loaded
 * machine schedules other processes, which would refuse a legitimate
 * command for the machine's load rather than for its cost.
 *
 * Contract: `open*` return null where procfs does not answer (not Linux, a
 * thread that is gone); `ms()` returns null once the thread is gone (its
 * file then reads as zero times, below an earlier reading) or the file
 * cannot be read, and never throws; it never runs backwards. The file stays open (one `pread` per
 * reading) until `close`.
 */
export class CpuClock {
  readonly #buffer = Buffer.alloc(STAT_BYTES);
  #fd: number | null;
  /** The last reading: a later one below it means the thread is gone. */
  #last = 0;

  private constructor(fd: number) {
    this.#fd = fd;
  }

  /** The calling thread's clock (`/proc/thread-self/stat`; in a worker thread, that thread's). */
  static openOwnThread(): CpuClock | null {
    return CpuClock.#open('/proc/thread-self/stat');
  }

  /** The clock of thread `tid` of process `pid` (a worker thread of this process, or a child's main thread: `tid === pid`). */
  static openThread(pid: number, tid: number): CpuClock | null {
    if (!Number.isSafeInteger(pid) || !Number.isSafeInteger(tid) || pid <= 0 || tid <= 0) return null;
    return CpuClock.#open(`/proc/${pid}/task/${tid}/stat`);
  }

  static #open(path: string): CpuClock | null {
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch {
      return null;
    }
    const clock = new CpuClock(fd);
    if (clock.ms() === null) {
      clock.close();
      return null;
    }
    return clock;
  }

  /** CPU time used so far, in ms; null when it cannot be read. */
  ms(): number | null {
    const fields = this.#fields();
    if (fields === null) return null;
    // After the `(comm)` field: [0] is field 3 (state), so utime (14) is [11] and stime (15) is [12].
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    if (!Number.isSafeInteger(utime) || !Number.isSafeInteger(stime)) return null;
    const ms = ((utime + stime) * 1000) / USER_HZ;
    // A thread's times never decrease; an ended thread's file reads as zero times.
    if (ms < this.#last) {
      this.close();
      return null;
    }
    this.#last = ms;
    return ms;
  }

  close(): void {
    if (this.#fd === null) return;
    try {
      closeSync(this.#fd);
    } catch {
      // already closed: nothing to release
    }
    this.#fd = null;
  }

  #fields(): string[] | null {
    if (this.#fd === null) return null;
    let bytes: number;
    try {
      bytes = readSync(this.#fd, this.#buffer, 0, STAT_BYTES, 0);
    } catch {
      return null;
    }
    const line = this.#buffer.toString('latin1', 0, bytes);
    // `comm` may hold spaces and parentheses: the fields resume after the last `)`.
    const close = line.lastIndexOf(')');
    if (close < 0) return null;
    return line.slice(close + 2).split(' ');
  }
}

/** The calling thread's id (field 1 of `/proc/thread-self/stat`), or null where procfs does not answer. */
export function ownThreadId(): number | null {
  try {
    const tid = Number(readFileSync('/proc/thread-self/stat', 'latin1').split(' ', 1)[0]);
    return Number.isSafeInteger(tid) && tid > 0 ? tid : null;
  } catch {
    return null;
  }
}
