import { createHash, createPublicKey, type KeyObject, sign, verify } from 'node:crypto';
import type { ChainHead } from './chain.js';

/**
 * Signed checkpoints of the audit trail.
 *
 * Contract (docs/AUDIT.md, "Signed checkpoints"):
 * - A checkpoint is an ordinary chained record that also carries a top-level
 *   `checkpoint` member: `{"alg":"ed25519","key_id":K,"seq":S,"sig":G}`,
 *   plus `"final":true` on the checkpoint a writer makes when it stops.
 * - `S` and the record's `prev_hash` name the record it follows (seq `S`,
 *   hash `prev_hash`): the checkpoint's own seq is `S + 1`.
 * - `G` is the base64 Ed25519 signature of the UTF-8 text
 *   `termgate-audit-checkpoint/1\n<S>\n<prev_hash>\n`, and for a final one
 *   `termgate-audit-checkpoint/1\n<S>\n<prev_hash>\nfinal\n`: the mark is
 *   inside the signed bytes, so it can be neither added nor removed without
 *   the key. Because each hash covers every record before it, a valid
 *   signature vouches for seq 1..S (and, when final, that its writer stopped there).
 * - Any `final` other than absent or `true` is invalid.
 * - `K` is the first 16 hex digits of SHA-256 of the public key's SPKI DER.
 *   It names the key; trust comes only from the key the verifier is given.
 */
export const CHECKPOINT_ALG = 'ed25519';

export interface CheckpointMember {
  readonly alg: typeof CHECKPOINT_ALG;
  readonly key_id: string;
  readonly seq: number;
  readonly sig: string;
  /** Present (true) only on the checkpoint a writer makes when it stops. */
  readonly final?: true;
}

/** The bytes a checkpoint signs (see the contract above). */
export function checkpointMessage(head: ChainHead, final = false): Buffer {
  return Buffer.from(
    `termgate-audit-checkpoint/1\n${head.seq}\n${head.hash}\n${final ? 'final\n' : ''}`,
    'utf8',
  );
}

/** The key id of a public (or private: its public half) Ed25519 key. */
export function keyId(key: KeyObject): string {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  return createHash('sha256')
    .update(pub.export({ type: 'spki', format: 'der' }))
    .digest('hex')
    .slice(0, 16);
}

/** The `checkpoint` member for `head`, signed with `privateKey` (Ed25519); `final` at a writer's stop. */
export function signCheckpoint(
  privateKey: KeyObject,
  head: ChainHead,
  id = keyId(privateKey),
  final = false,
): CheckpointMember {
  return {
    alg: CHECKPOINT_ALG,
    key_id: id,
    seq: head.seq,
    sig: sign(null, checkpointMessage(head, final), privateKey).toString('base64'),
    ...(final ? { final: true as const } : {}),
  };
}

/** Whether a record's `checkpoint` member is marked final (checked or not). */
export function isFinalCheckpoint(member: unknown): boolean {
  return typeof member === 'object' && member !== null && (member as { final?: unknown }).final === true;
}

/**
 * Checks a record's `checkpoint` member against the record it follows
 * (`head`) and the trusted public keys. Returns null when it is valid, else
 * the problem in one sentence.
 */
export function checkCheckpoint(
  member: unknown,
  head: ChainHead,
  keys: ReadonlyMap<string, KeyObject>,
): string | null {
  if (typeof member !== 'object' || member === null) return 'the checkpoint member is not an object';
  const { alg, key_id: id, seq, sig, final } = member as Partial<Record<keyof CheckpointMember, unknown>>;
  if (alg !== CHECKPOINT_ALG)
    return `the checkpoint's alg is ${JSON.stringify(alg)}, not "${CHECKPOINT_ALG}"`;
  if (seq !== head.seq) return `the checkpoint names seq ${String(seq)}, but follows seq ${head.seq}`;
  if (typeof sig !== 'string' || typeof id !== 'string') return 'the checkpoint has no key_id or sig';
  if (final !== undefined && final !== true) {
    return `the checkpoint's final is ${JSON.stringify(final)}, not true or absent`;
  }
  const key = keys.get(id);
  if (key === undefined) {
    return `the checkpoint is signed by key ${id}, which is not a given public key (${[...keys.keys()].join(', ')})`;
  }
  const ok = verify(null, checkpointMessage(head, final === true), key, Buffer.from(sig, 'base64'));
  return ok ? null : `the checkpoint's signature does not verify with key ${id}: forged or re-signed`;
}
