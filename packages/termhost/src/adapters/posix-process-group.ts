import { readdirSync, readFileSync } from 'node:fs';

/** What a signal or probe found. */
export type GroupProbe = 'alive' | 'gone' | 'forbidden';

/**
 * Sends `signal` (0 probes) to the process group `pgid`.
 * Refuses a `pgid` ≤ 1: `kill(0)` and `kill(-1)` would hit our own group or every process.
 */
export function signalProcessGroup(pgid: number, signal: NodeJS.Signals | 0): GroupProbe {
  if (!Number.isSafeInteger(pgid) || pgid <= 1) return 'gone';
  try {
    process.kill(-pgid, signal);
    return 'alive';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ESRCH') return 'gone';
    if (code === 'EPERM') return 'forbidden';
    throw error;
  }
}

/**
 * True while some process of group `pgid` is not a zombie.
 *
 * `kill(-pgid, 0)` alone also succeeds for zombies, and orphaned zombies stay
 * until init reaps them; an init that never reaps (some container and VM
 * inits) would make a killed group look alive forever. On Linux the group's
 * members are therefore read from `/proc`; elsewhere the probe is trusted.
 */
export function processGroupAlive(pgid: number): boolean {
  if (signalProcessGroup(pgid, 0) === 'gone') return false;
  const members = readGroupStates(pgid);
  if (members === null) return true;
  return members.some((state) => state !== 'Z' && state !== 'X');
}

/** States (`R`, `S`, `Z`, …) of the processes in group `pgid`, or `null` without a readable `/proc`. */
function readGroupStates(pgid: number): string[] | null {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return null;
  }
  const states: string[] = [];
  for (const entry of entries) {
    const first = entry.charCodeAt(0);
    if (first < 48 || first > 57) continue;
    const stat = readStat(entry);
    if (stat !== null && stat.pgrp === pgid) states.push(stat.state);
  }
  return states;
}

/** Parses `/proc/<pid>/stat`; `null` when the process vanished meanwhile. */
export function readStat(pid: number | string): { state: string; ppid: number; pgrp: number } | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return null;
  }
  // "pid (comm) state ppid pgrp …"; comm may itself contain spaces and parentheses.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const [state, ppid, pgrp] = fields;
  if (state === undefined || ppid === undefined || pgrp === undefined) return null;
  return { state, ppid: Number(ppid), pgrp: Number(pgrp) };
}
