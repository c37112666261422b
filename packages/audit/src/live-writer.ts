import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { TrailWriter } from './trail-writers.js';

/** How much later than its `server-start` record a process may seem to have started (clock ticks, rounding). */
const START_SLACK_MS = 5_000;
/** Linux's USER_HZ, the unit of /proc/PID/stat's starttime, is 100 on every architecture Node supports. */
const CLOCK_TICKS_PER_S = 100;

/**
 * Whether `writer` is, as far as this host can tell, still running: its
 * record names this host (`host.hostname`), its pid is alive (signal 0;
 * EPERM counts as alive), and, where `/proc` shows it, that process started
 * no later than its `server-start` record (a pid reused by a process started
 * since is not the writer). A writer of another host, or of a trail without
 * hostnames, is never taken as running. Evidence, not proof: whoever can cut
 * the trail can also write a start record naming a live pid; callers must
 * never treat a running writer as a complete trail.
 */
export function isWriterRunning(writer: TrailWriter, thisHost: string = hostname()): boolean {
  if (writer.hostname === null || writer.hostname !== thisHost) return false;
  if (writer.pid <= 0) return false;
  try {
    process.kill(writer.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const started = processStartMs(writer.pid);
  const recorded = Date.parse(writer.since);
  if (started === null || Number.isNaN(recorded)) return true;
  return started <= recorded + START_SLACK_MS;
}

/** A process's start time (ms since the epoch) from /proc, or null where /proc does not tell. */
function processStartMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may hold anything.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[19]); // field 22, starttime
    const btime = /^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'));
    if (!Number.isFinite(ticks) || btime === null) return null;
    return Number(btime[1]) * 1000 + (ticks / CLOCK_TICKS_PER_S) * 1000;
  } catch {
    return null;
  }
}
