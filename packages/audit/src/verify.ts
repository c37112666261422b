import { anchorHash, type ChainHead } from './chain.js';
import { type AuditLine, readAuditLines } from './line-reader.js';
import { headOf, isSealedRecord, openSealedLine, type SealedRecord } from './sealed-record.js';

export type VerifyResult =
  | {
      readonly ok: true;
      /** Number of records checked. */
      readonly records: number;
      /** The last record, or null for an empty file. Note its hash off-box to detect later rewrites. */
      readonly head: ChainHead | null;
    }
  | {
      readonly ok: false;
      /** The seq the chain expected at the first record that fails. */
      readonly seq: number;
      /** 1-based line number of that record. */
      readonly line: number;
      /** What is wrong, in one sentence. */
      readonly problem: string;
      /** Records before it that are intact. */
      readonly records: number;
    };

/**
 * Checks a whole chain (see `chain.ts`): every line is a record whose hash
 * matches its bytes, seqs run 1, 2, 3, … without gaps or repeats, every
 * `prev_hash` is the previous record's hash, the first record is an anchor
 * (`prev_hash` = SHA-256 of its `nonce`), and the last line ends with a
 * newline. Stops at the first problem.
 *
 * What it cannot see: a file truncated exactly at a record boundary, or a
 * chain rewritten from some point on by someone who recomputed every hash.
 * Both need the head hash kept elsewhere (a SIEM copy or a noted `head`).
 *
 * With `after`, the lines are checked as the continuation of a chain whose
 * last record is `after` (the writer's check of what other writers appended):
 * the first line must then be seq `after.seq + 1` linked to `after.hash`.
 * `records` counts only these lines.
 *
 * `check`, when given, sees every record that chains (and the record before
 * it) and may fail it with a problem sentence (signed checkpoints).
 */
export function verifyAuditLines(
  lines: Iterable<AuditLine | string>,
  after: ChainHead | null = null,
  check?: (record: SealedRecord, previous: ChainHead | null) => string | null,
): VerifyResult {
  let head: ChainHead | null = after;
  let count = 0;
  let lineNo = 0;
  for (const item of lines) {
    const line: AuditLine =
      typeof item === 'string' ? { lineNo: lineNo + 1, bytes: Buffer.from(item), terminated: true } : item;
    lineNo = line.lineNo;
    const expected = head === null ? 1 : head.seq + 1;
    const fail = (problem: string): VerifyResult => ({
      ok: false,
      seq: expected,
      line: line.lineNo,
      problem,
      records: count,
    });
    if (!line.terminated) return fail('truncated record: the file ends in the middle of a line');
    const opened = openSealedLine(line.bytes);
    if (!isSealedRecord(opened)) return fail(opened.problem);
    if (opened.seq > expected) {
      return fail(`found seq ${opened.seq} where seq ${expected} was expected: records missing or reordered`);
    }
    if (opened.seq < expected) {
      return fail(
        `found seq ${opened.seq} where seq ${expected} was expected: records repeated or reordered`,
      );
    }
    if (head === null) {
      if (opened.nonce === undefined || opened.prevHash !== anchorHash(opened.nonce)) {
        return fail('the first record is not an anchor: its prev_hash is not SHA-256 of its nonce');
      }
    } else if (opened.prevHash !== head.hash) {
      return fail(`broken link: prev_hash is not the hash of seq ${head.seq} (record replaced or inserted)`);
    }
    const problem = check?.(opened, head) ?? null;
    if (problem !== null) return fail(problem);
    head = headOf(opened);
    count += 1;
  }
  return { ok: true, records: count, head };
}

/** `verifyAuditLines` over a file. Throws the I/O error when the file cannot be read. */
export function verifyAuditFile(path: string): VerifyResult {
  return verifyAuditLines(readAuditLines(path));
}
