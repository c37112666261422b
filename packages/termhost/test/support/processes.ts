import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { readStat } from '../../src/adapters/posix-process-group.js';

/** Pids whose parent is `ppid` (zombies included: an unreaped child is a leak). */
export function childPids(ppid: number = process.pid): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(entry);
    if (stat !== null && stat.ppid === ppid) pids.push(Number(entry));
  }
  return pids;
}

export function openFdCount(): number {
  return readdirSync('/proc/self/fd').length;
}

/** Polls `probe` until it returns something other than `undefined`/`false`; fails after `ms`. */
export async function until<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  ms = 10_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await delay(10);
  }
}

/** A fresh temporary directory, removed by the returned cleanup. */
export function tempDir(): { path: string; cleanup: () => void } {
  const path = mkdtempSync(join(tmpdir(), 'termhost-test-'));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}
