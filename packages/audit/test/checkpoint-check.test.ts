import { generateKeyPairSync } from 'node:crypto';
import {
  type ChainHead,
  checkCheckpoint,
  checkpointMessage,
  isFinalCheckpoint,
  keyId,
  signCheckpoint,
} from '@termgate/audit';

/**
 * `checkCheckpoint` on its own: every member a verifier must refuse, each
 * with the sentence that says why, and the defaults of the signing side.
 * The trail-level tests (checkpoint.test.ts) reach these only through a
 * whole signed trail.
 */
describe('checkCheckpoint', () => {
  const head: ChainHead = { seq: 7, hash: 'a'.repeat(64) };
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const id = keyId(publicKey);
  const keys = new Map([[id, publicKey]]);
  const valid = signCheckpoint(privateKey, head);

  test('a member signed for the head by a given key is valid', () => {
    expect(checkCheckpoint(valid, head, keys)).toBeNull();
  });

  test('a member that is not an object is refused, not read', () => {
    for (const member of [null, 'x', 7, true]) {
      expect(checkCheckpoint(member, head, keys)).toBe('the checkpoint member is not an object');
    }
  });

  test('a signature that verifies does not excuse another alg or seq in the member', () => {
    expect(checkCheckpoint({ ...valid, alg: 'rsa' }, head, keys)).toBe(
      `the checkpoint's alg is "rsa", not "ed25519"`,
    );
    expect(checkCheckpoint({ ...valid, seq: 8 }, head, keys)).toBe(
      'the checkpoint names seq 8, but follows seq 7',
    );
    expect(checkCheckpoint({ ...valid, seq: '7' }, head, keys)).toBe(
      'the checkpoint names seq 7, but follows seq 7',
    );
  });

  test('a member without key_id or sig is refused', () => {
    const { sig: _sig, ...noSig } = valid;
    const { key_id: _id, ...noId } = valid;
    expect(checkCheckpoint(noSig, head, keys)).toBe('the checkpoint has no key_id or sig');
    expect(checkCheckpoint(noId, head, keys)).toBe('the checkpoint has no key_id or sig');
  });

  test('a key id that is not given is refused, naming the keys that were', () => {
    const other = generateKeyPairSync('ed25519').publicKey;
    const given = new Map([
      [keyId(other), other],
      ['0123456789abcdef', other],
    ]);
    expect(checkCheckpoint(valid, head, given)).toBe(
      `the checkpoint is signed by key ${id}, which is not a given public key (${keyId(other)}, 0123456789abcdef)`,
    );
  });

  test('isFinalCheckpoint is true only for an object whose final is true', () => {
    expect(isFinalCheckpoint({ final: true })).toBe(true);
    for (const member of [null, undefined, 'final', 1, {}, { final: 'true' }, { final: 1 }]) {
      expect(isFinalCheckpoint(member)).toBe(false);
    }
  });

  test('by default a checkpoint is not final: no mark in the member, none in the signed text', () => {
    expect(valid).not.toHaveProperty('final');
    expect(checkpointMessage(head).toString('utf8')).toBe(`termgate-audit-checkpoint/1\n7\n${head.hash}\n`);
    expect(checkpointMessage(head, true).toString('utf8')).toBe(
      `termgate-audit-checkpoint/1\n7\n${head.hash}\nfinal\n`,
    );
    expect(checkCheckpoint({ ...valid, final: true }, head, keys)).toBe(
      `the checkpoint's signature does not verify with key ${id}: forged or re-signed`,
    );
  });
});
