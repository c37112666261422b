import { closeSync, openSync } from 'node:fs';
import { recordHash, unsealLine } from '../../chain.js';
import { readAuditLinesAt } from '../../line-reader.js';
import type { CursorPosition } from './trail-cursor.js';

/** The trail does not chain on from what was exported: the export stops (not retried). */
export class TrailChainBroken extends Error {
  override readonly name = 'TrailChainBroken';
}

/** A record read from the trail, checked against the chain, not yet exported. */
export interface FollowedRecord {
  readonly seq: number;
  readonly hash: string;
  readonly record: Readonly<Record<string, unknown>>;
}

/**
 * Reads a trail's records after a position, in order, checking the chain
 * as it goes: each record's hash matches its bytes, `seq` runs on by one
 * and `prev_hash` is the hash of the record before, from the record at the
 * position on (the position's own record, when still in the trail, must
 * have the position's hash). A break throws an `Error` naming the file and
 * seq: an export does not pass on records it could not link to what it
 * exported before. Only complete lines are read (a line still being written
 * waits for the next `fill`).
 *
 * `files()` lists the trail's files, oldest first; it is asked again on
 * every `fill`, so new segments of a rotating trail are found. Reading
 * resumes at the byte where it stopped in each file; segments are never
 * rewritten (docs/AUDIT.md, "Rotation").
 */
export class TrailFollower {
  private readonly offsets = new Map<string, number>();
  private readonly pending: FollowedRecord[] = [];
  private last: CursorPosition | null;

  constructor(
    private readonly files: () => readonly string[],
    private readonly after: CursorPosition | null,
  ) {
    this.last = after;
  }

  /** Reads until `max` records wait (or the trail's end); returns the waiting records, oldest first. */
  fill(max: number): readonly FollowedRecord[] {
    if (this.pending.length >= max) return this.pending.slice(0, max);
    for (const file of this.files()) {
      if (this.pending.length >= max) break;
      this.readFile(file, max);
    }
    return this.pending.slice(0, max);
  }

  /** Drops the first `count` waiting records: the collector has them. */
  confirm(count: number): void {
    this.pending.splice(0, count);
  }

  private readFile(file: string, max: number): void {
    const start = this.offsets.get(file) ?? 0;
    const fd = openSync(file, 'r');
    try {
      let offset = start;
      for (const line of readAuditLinesAt(fd, start, Number.POSITIVE_INFINITY)) {
        if (!line.terminated) break;
        offset += line.bytes.length + 1;
        if (line.bytes.length > 0) this.take(file, line.bytes.toString('utf8'));
        this.offsets.set(file, offset);
        if (this.pending.length >= max) break;
      }
    } finally {
      closeSync(fd);
    }
  }

  private take(file: string, text: string): void {
    const broken = (why: string): Error =>
      new TrailChainBroken(`${file}: ${why}; nothing after it is exported`);
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw broken(`a line after seq ${this.last?.seq ?? 0} is not JSON`);
    }
    const sealed = unsealLine(text);
    const { seq, prev_hash: prevHash } = record;
    if (sealed === null || typeof seq !== 'number' || typeof prevHash !== 'string') {
      throw broken(`a record after seq ${this.last?.seq ?? 0} has no seq, prev_hash or hash`);
    }
    if (recordHash(prevHash, sealed.body) !== sealed.hash) throw broken(`seq ${seq} does not match its hash`);
    if (this.after !== null && seq <= this.after.seq) {
      if (seq === this.after.seq && sealed.hash !== this.after.hash) {
        throw broken(`seq ${seq} is not the record the cursor says was exported`);
      }
      return;
    }
    if (this.last !== null && (seq !== this.last.seq + 1 || prevHash !== this.last.hash)) {
      throw broken(`seq ${seq} does not follow seq ${this.last.seq}`);
    }
    this.last = { seq, hash: sealed.hash };
    this.pending.push({ seq, hash: sealed.hash, record });
  }
}
