import { type ChainHead, isHex64, recordHash, SEAL_SUFFIX_LENGTH, unsealLine } from './chain.js';

const CLOSING_BRACE = Buffer.from('}');

/** One record read back from a line, checked against its own `hash`. */
export interface SealedRecord {
  readonly seq: number;
  readonly prevHash: string;
  readonly hash: string;
  readonly nonce: string | undefined;
  readonly record: Readonly<Record<string, unknown>>;
}

/**
 * Parses one line (without its newline) and checks that its `hash` matches
 * its bytes and its `prev_hash`. It does not check the link to the previous
 * record: that needs the previous record (see `verify.ts`).
 * Returns the record, or a problem sentence.
 */
export function openSealedLine(bytes: Uint8Array): SealedRecord | { problem: string } {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  if (text.length === 0) return { problem: 'empty line where a record was expected' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { problem: 'not valid JSON (edited or truncated record)' };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { problem: 'not a JSON object' };
  }
  const record = parsed as Record<string, unknown>;
  const sealed = unsealLine(text);
  if (sealed === null) return { problem: 'no "hash" member at the end of the record' };
  const { seq, prev_hash: prevHash, nonce } = record;
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1) {
    return { problem: '"seq" is missing or not a positive integer' };
  }
  if (!isHex64(prevHash)) return { problem: '"prev_hash" is missing or not 64 hex characters' };
  // The body is the line without its seal, plus the closing brace: hashed in two parts, without a copy.
  if (
    recordHash(prevHash, bytes.subarray(0, bytes.length - SEAL_SUFFIX_LENGTH), CLOSING_BRACE) !== sealed.hash
  ) {
    return { problem: 'hash mismatch: the record was edited after it was written' };
  }
  return {
    seq,
    prevHash,
    hash: sealed.hash,
    nonce: typeof nonce === 'string' ? nonce : undefined,
    record,
  };
}

export function isSealedRecord(value: SealedRecord | { problem: string }): value is SealedRecord {
  return !('problem' in value);
}

export function headOf(record: SealedRecord): ChainHead {
  return { seq: record.seq, hash: record.hash };
}
