import { readRecordGroups } from './record-schema.js';

/** A server that started writing the trail and has no `server-stop` in it (yet). */
export interface TrailWriter {
  /** `process.pid` of its `server-start` record. */
  readonly pid: number;
  /** `host.hostname` of that record; null in trails written before it was recorded. */
  readonly hostname: string | null;
  /** `@timestamp` of that record (ISO text). */
  readonly since: string;
  /** seq of that record. */
  readonly seq: number;
}

/**
 * Follows `server-start` and `server-stop` records (by `process.pid`) while
 * a trail is read: `open` are the writers that started and did not stop.
 * A start record without a numeric pid is ignored; a stop without a start
 * removes nothing.
 */
export class TrailWriters {
  readonly #open = new Map<number, TrailWriter>();

  note(record: Readonly<Record<string, unknown>>, seq: number): void {
    const { event, process: started, host } = readRecordGroups(record);
    const action = event.action;
    const pid = started.pid;
    if (typeof pid !== 'number' || !Number.isSafeInteger(pid)) return;
    if (action === 'server-stop') this.#open.delete(pid);
    if (action !== 'server-start') return;
    const hostname = host.hostname;
    this.#open.set(pid, {
      pid,
      hostname: typeof hostname === 'string' ? hostname : null,
      since: String(record['@timestamp'] ?? ''),
      seq,
    });
  }

  get open(): TrailWriter[] {
    return [...this.#open.values()];
  }
}
