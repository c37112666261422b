import { readFileSync } from 'node:fs';

/** Peak resident memory of a live process, in bytes (Linux `VmHWM`). */
export function peakRss(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (match === null) throw new Error(`no VmHWM for ${pid}`);
  return Number(match[1]) * 1024;
}

/** Pids of the `terminal-spawn` records of an audit trail, in order. */
export function spawnedPids(auditPath: string): number[] {
  return readFileSync(auditPath, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))
    .filter((r) => r.event.action === 'terminal-spawn')
    .map((r) => r.process.pid as number);
}
