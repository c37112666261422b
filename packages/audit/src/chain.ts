import { createHash, randomBytes } from 'node:crypto';

/**
 * The hash chain of an audit file.
 *
 * Definition (docs/AUDIT.md, "Chain"):
 * - Every record is one JSON object on one line and carries a top-level
 *   `seq` (1, 2, 3, … within the file), `prev_hash` and, as its **last**
 *   member, `hash`.
 * - `body` = the exact UTF-8 bytes of the line, without the newline, with the
 *   final `,"hash":"<64 hex>"` removed (so the body ends with `}`).
 * - `hash` = lowercase hex SHA-256 of `prev_hash + "\n" + body`.
 * - `prev_hash` is the previous line's `hash`. The first record of a file is
 *   the anchor: it also carries `nonce` (64 hex characters, 32 random bytes)
 *   and its `prev_hash` is SHA-256 of the nonce's hex text.
 *
 * Hashing exact bytes (not re-serialized JSON) means a verifier in any
 * language needs no JSON canonicalization, and any change of a byte of a
 * record (including whitespace or key order) is detected.
 */

/** Length of `,"hash":"` + 64 hex + `"}`. */
export const SEAL_SUFFIX_LENGTH = 75;
const SEAL_SUFFIX = /,"hash":"([0-9a-f]{64})"\}$/;
const HEX64 = /^[0-9a-f]{64}$/;

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** `prev_hash` of the anchor record for `nonce`. */
export function anchorHash(nonce: string): string {
  return sha256Hex(nonce);
}

/** The hash of a record whose body (see above) is `body`, or the concatenation of `body` and `more`. */
export function recordHash(prevHash: string, body: string | Uint8Array, more?: Uint8Array): string {
  const hash = createHash('sha256').update(`${prevHash}\n`).update(body);
  if (more !== undefined) hash.update(more);
  return hash.digest('hex');
}

export function isHex64(value: unknown): value is string {
  return typeof value === 'string' && HEX64.test(value);
}

/**
 * Splits a sealed line (no newline) into its body and its hash, or returns
 * null when the line does not end with a well-formed `hash` member.
 */
export function unsealLine(line: string): { body: string; hash: string } | null {
  const match = SEAL_SUFFIX.exec(line);
  if (match === null) return null;
  return { body: `${line.slice(0, line.length - SEAL_SUFFIX_LENGTH)}}`, hash: match[1]! };
}

/** The last record written: where the next record links to. */
export interface ChainHead {
  readonly seq: number;
  readonly hash: string;
}

/** Fields the sink puts on the next record, before the event body. */
export interface ChainFields {
  readonly seq: number;
  readonly prev_hash: string;
  /** Only on the first record of a file. */
  readonly nonce?: string;
}

/**
 * The writer's side of the chain. Not thread-safe and not I/O: the sink asks
 * `next()` for the fields, serializes, calls `seal()`, writes, and calls
 * `commit()` only once the line is durably written. A failed write leaves the
 * chain where it was.
 */
export class AuditChain {
  private constructor(
    private head: ChainHead | null,
    private readonly nonce: string,
  ) {}

  /** A chain for a new (empty) file, anchored to a fresh random nonce. */
  static start(nonce: string = randomBytes(32).toString('hex')): AuditChain {
    return new AuditChain(null, nonce);
  }

  /** A chain that continues after an existing file's last record. */
  static resume(head: ChainHead): AuditChain {
    return new AuditChain(head, '');
  }

  /** The last committed record, or null before the first one. */
  get last(): ChainHead | null {
    return this.head;
  }

  next(): ChainFields {
    if (this.head === null) return { seq: 1, prev_hash: anchorHash(this.nonce), nonce: this.nonce };
    return { seq: this.head.seq + 1, prev_hash: this.head.hash };
  }

  /**
   * Appends the `hash` member to `unsealed` (one JSON object, no newline, built
   * with the fields of `next()`). Returns the line (no newline) and its hash.
   */
  seal(unsealed: string): { line: string; hash: string } {
    if (!unsealed.endsWith('}')) throw new TypeError('an audit record must be a JSON object');
    const hash = recordHash(this.next().prev_hash, unsealed);
    return { line: `${unsealed.slice(0, -1)},"hash":"${hash}"}`, hash };
  }

  /**
   * Moves the head to a record another writer appended after ours (checked
   * by the caller to chain from our head). The next record links to it.
   */
  adopt(head: ChainHead): void {
    if (this.head !== null && head.seq <= this.head.seq) {
      throw new RangeError(`cannot adopt seq ${head.seq}: the chain is already at seq ${this.head.seq}`);
    }
    this.head = head;
  }

  /** Advances after the sealed line with `hash` was written. */
  commit(hash: string): void {
    this.head = { seq: this.next().seq, hash };
  }
}
