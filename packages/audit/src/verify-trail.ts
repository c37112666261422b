import type { KeyObject } from 'node:crypto';
import { basename } from 'node:path';
import type { ChainHead } from './chain.js';
import { checkCheckpoint, isFinalCheckpoint } from './checkpoint.js';
import { readAuditLines } from './line-reader.js';
import { isSealedRecord, openSealedLine, type SealedRecord } from './sealed-record.js';
import { type TrailWriter, TrailWriters } from './trail-writers.js';
import { verifyAuditLines } from './verify.js';

export interface TrailVerifyOptions {
  /**
   * Trusted checkpoint keys by key id (`checkpoint.ts`). When given,
   * every checkpoint must verify with one of them, and the result counts the
   * records after the last checkpoint as unsigned.
   */
  readonly publicKeys?: ReadonlyMap<string, KeyObject>;
}

export interface TrailFileSummary {
  readonly file: string;
  readonly records: number;
  /** seq of the file's first and last record; null for an empty file. */
  readonly firstSeq: number | null;
  readonly lastSeq: number | null;
}

export interface TrailProblem {
  /** The file the problem is in (or, for a missing file, the file after the gap). */
  readonly file: string;
  /** 1-based line in that file; 0 when the problem is a file as a whole. */
  readonly line: number;
  /** The seq the chain expected there. */
  readonly seq: number;
  readonly message: string;
}

export interface TrailCheckpoints {
  /** Checkpoint records seen (checked only with `publicKeys`). */
  readonly count: number;
  readonly checked: boolean;
  /** The last seq a valid checkpoint vouches for; null when none. */
  readonly signedThrough: number | null;
  /** Records after the last checkpoint record (all records when there is none). */
  readonly unsigned: number;
  /**
   * Whether the trail's last record is a checkpoint marked final (a writer's
   * stop). With `publicKeys` its signature was checked too (the mark is
   * signed). Without keys it is only what the record says.
   */
  readonly final: boolean;
  /** Checkpoints marked final, anywhere in the trail; 0 in trails written before the mark existed. */
  readonly finalCount: number;
}

export interface TrailVerifyResult {
  readonly ok: boolean;
  readonly files: readonly TrailFileSummary[];
  /** Records checked and intact. */
  readonly records: number;
  /** The last intact record. */
  readonly head: ChainHead | null;
  readonly problem?: TrailProblem;
  readonly checkpoints: TrailCheckpoints;
  /** Servers that started writing the trail and have no `server-stop` in the intact part. */
  readonly writers: readonly TrailWriter[];
}

/**
 * Verifies files, oldest first, as one chain (see `chain.ts` and
 * `rotation.ts`): the first file starts with the anchor, and each next
 * file's first record continues the previous file's last one (seq + 1,
 * `prev_hash`). Stops at the first problem, and names the file:
 * - a file missing from the set (by the `prev_file` name its successor gives),
 * - files in the wrong order,
 * - a file cut at a record boundary (its successor continues a later seq),
 * - and within a file, everything `verifyAuditLines` reports.
 * With `publicKeys`, checkpoints are checked too. Throws the I/O error when a
 * file cannot be read.
 */
export function verifyAuditTrail(
  files: readonly string[],
  options: TrailVerifyOptions = {},
): TrailVerifyResult {
  const keys = options.publicKeys;
  const firsts = files.map(peekFirst);
  const summaries: TrailFileSummary[] = [];
  let head: ChainHead | null = null;
  let records = 0;
  let count = 0;
  let signedThrough: number | null = null;
  let lastCheckpointSeq = 0;
  let lastFinalSeq = 0;
  let finalCount = 0;
  const writers = new TrailWriters();
  const check = (record: SealedRecord, previous: ChainHead | null): string | null => {
    writers.note(record.record, record.seq);
    const member = record.record.checkpoint;
    if (member === undefined) return null;
    count += 1;
    lastCheckpointSeq = record.seq;
    if (isFinalCheckpoint(member)) {
      lastFinalSeq = record.seq;
      finalCount += 1;
    }
    if (keys === undefined) return null;
    if (previous === null) return 'a checkpoint cannot be the first record';
    const problem = checkCheckpoint(member, previous, keys);
    if (problem !== null) {
      const trusted =
        signedThrough === null
          ? 'no earlier checkpoint'
          : `the last valid checkpoint vouches for seq 1..${signedThrough}`;
      return `${problem}; ${trusted}`;
    }
    signedThrough = previous.seq;
    return null;
  };
  const result = (problem?: TrailProblem): TrailVerifyResult => ({
    ok: problem === undefined,
    files: summaries,
    records,
    head,
    ...(problem === undefined ? {} : { problem }),
    checkpoints: {
      count,
      checked: keys !== undefined,
      signedThrough,
      unsigned: head === null ? 0 : head.seq - lastCheckpointSeq,
      final: head !== null && lastFinalSeq === head.seq,
      finalCount,
    },
    writers: writers.open,
  });

  for (const [index, file] of files.entries()) {
    const first = firsts[index];
    const expected = head === null ? 1 : head.seq + 1;
    if (first !== undefined && first !== null && isSealedRecord(first)) {
      const gap = boundaryProblem(files, firsts, index, head);
      if (gap !== null) return result({ file, line: 1, seq: expected, message: gap });
    } else if (first === null && index < files.length - 1) {
      return result({ file, line: 0, seq: expected, message: `${file} is empty, but later files follow it` });
    }
    const verdict = verifyAuditLines(readAuditLines(file), head, check);
    records += verdict.records;
    if (!verdict.ok) {
      return result({ file, line: verdict.line, seq: verdict.seq, message: verdict.problem });
    }
    summaries.push({
      file,
      records: verdict.records,
      firstSeq: verdict.records === 0 ? null : expected,
      lastSeq: verdict.records === 0 ? null : (verdict.head?.seq ?? null),
    });
    head = verdict.head;
  }
  return result();
}

type First = SealedRecord | { problem: string } | null;

function peekFirst(file: string): First {
  const lines = readAuditLines(file);
  try {
    const first = lines.next();
    if (first.done === true) return null;
    if (!first.value.terminated) return { problem: 'truncated' };
    return openSealedLine(first.value.bytes);
  } finally {
    lines.return(undefined);
  }
}

/** Why `files[index]` does not continue `head` (the previous files' last record), or null when it does. */
function boundaryProblem(
  files: readonly string[],
  firsts: readonly First[],
  index: number,
  head: ChainHead | null,
): string | null {
  const file = files[index]!;
  const first = firsts[index] as SealedRecord;
  const prevFile = typeof first.record.prev_file === 'string' ? first.record.prev_file : null;
  if (head === null) {
    if (first.nonce !== undefined) return null;
    const anchor = firsts.findIndex(
      (other, j) => j > index && other !== null && isSealedRecord(other) && other.nonce !== undefined,
    );
    if (anchor !== -1)
      return `files out of order: ${files[anchor]} (the trail's first file) must come before ${file}`;
    const missing = prevFile === null ? 'an earlier file' : `file ${prevFile}`;
    return `${file} does not start the trail: its first record, seq ${first.seq}, continues ${missing}, which is missing (seq 1..${first.seq - 1})`;
  }
  const previous = files[index - 1]!;
  const expected = head.seq + 1;
  if (first.seq === expected && first.prevHash === head.hash && first.nonce === undefined) return null;
  if (first.nonce !== undefined) {
    return `${file} starts a new trail (its first record is an anchor) after ${previous} ended at seq ${head.seq}: not one chain`;
  }
  const later = firsts.findIndex(
    (other, j) => j > index && other !== null && isSealedRecord(other) && other.seq === expected,
  );
  if (later !== -1) {
    return `files out of order: ${files[later]} (from seq ${expected}) must come before ${file} (from seq ${first.seq})`;
  }
  if (first.seq < expected) {
    return `files out of order or repeated: ${file} starts at seq ${first.seq}, but ${previous} already ended at seq ${head.seq}`;
  }
  if (first.seq > expected) {
    if (prevFile === basename(previous)) {
      return `${previous} is truncated: it ends at seq ${head.seq}, but ${file} continues it from seq ${first.seq - 1} (seq ${expected}..${first.seq - 1} are missing)`;
    }
    return `missing file ${prevFile ?? '(unnamed)'} between ${previous} and ${file}: seq ${expected}..${first.seq - 1} are missing`;
  }
  return `${file} does not continue ${previous}: its first record, seq ${first.seq}, does not link to the hash of seq ${head.seq} (a record was replaced, or a file is missing)`;
}
