/**
 * The signed bytes of a checkpoint, checked as docs/AUDIT.md tells an
 * independent verifier to check them: the message is built here from the
 * documented text (not with the package's own function), the key id from
 * the public key file's DER, and the signature is verified with node:crypto
 * and with `openssl pkeyutl`. Signing and verifying in the package share one
 * function, so only a check like this one sees a change of the bytes.
 */
import { execFileSync } from 'node:child_process';
import { createHash, createPublicKey, verify } from 'node:crypto';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { generateSigningKeyPair, loadSigningKey } from '@termgate/audit';
import { CheckpointingAuditSink, FileAuditSink } from '@termgate/audit/adapters';
import { records } from './support/audit-file.js';
import { tempDir } from './support/temp-dir.js';

const AUDIT_MD = fs.readFileSync(join(import.meta.dirname, '../../../docs/AUDIT.md'), 'utf8');

describe('checkpoint bytes, as docs/AUDIT.md describes them', () => {
  let dir: ReturnType<typeof tempDir>;
  let keyPath: string;
  let checkpoints: { seq: number; prev_hash: string; checkpoint: Record<string, unknown> }[];

  beforeAll(() => {
    dir = tempDir();
    fs.mkdirSync(join(dir.path, 'keys'), { mode: 0o700 });
    keyPath = join(dir.path, 'keys', 'audit-key');
    generateSigningKeyPair(keyPath);
    const file = join(dir.path, 'audit.jsonl');
    const sink = new CheckpointingAuditSink(FileAuditSink.open(file), {
      privateKey: loadSigningKey(keyPath),
      everyRecords: 2,
    });
    for (let n = 0; n < 3; n += 1) sink.append({ event: { action: 'x' }, termgate: { n } });
    sink.close();
    checkpoints = records(file).filter((r) => 'checkpoint' in r) as typeof checkpoints;
  });
  afterAll(() => dir.cleanup());

  test('the documentation states the format this test checks', () => {
    expect(AUDIT_MD).toContain('`termgate-audit-checkpoint/1\\n<S>\\n<prev_hash>\\n`');
    expect(AUDIT_MD).toContain('`termgate-audit-checkpoint/1\\n<S>\\n<prev_hash>\\nfinal\\n`');
    expect(AUDIT_MD).toContain('first 16 hex digits of the SHA-256 of the public key');
  });

  test('each checkpoint signs the documented text of the record before it; the stop one adds the final line', () => {
    const pem = fs.readFileSync(`${keyPath}.pub`, 'utf8');
    const der = Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
    const expectedId = createHash('sha256').update(der).digest('hex').slice(0, 16);
    const publicKey = createPublicKey(pem);
    expect(checkpoints.map((c) => c.checkpoint.final)).toEqual([undefined, true]);
    for (const { seq, prev_hash: prevHash, checkpoint } of checkpoints) {
      expect(checkpoint).toMatchObject({ alg: 'ed25519', key_id: expectedId, seq: seq - 1 });
      const text = `termgate-audit-checkpoint/1\n${seq - 1}\n${prevHash}\n${checkpoint.final === true ? 'final\n' : ''}`;
      const sig = Buffer.from(checkpoint.sig as string, 'base64');
      expect(verify(null, Buffer.from(text, 'utf8'), publicKey, sig)).toBe(true);
      // The same signature over the text without the prefix, or with the other final line, fails.
      const bare = text.replace('termgate-audit-checkpoint/1\n', '');
      expect(verify(null, Buffer.from(bare, 'utf8'), publicKey, sig)).toBe(false);
      const flipped = checkpoint.final === true ? text.replace(/final\n$/, '') : `${text}final\n`;
      expect(verify(null, Buffer.from(flipped, 'utf8'), publicKey, sig)).toBe(false);

      const message = join(dir.path, `message-${seq}`);
      const sigFile = join(dir.path, `sig-${seq}`);
      fs.writeFileSync(message, text);
      fs.writeFileSync(sigFile, sig);
      const out = execFileSync(
        'openssl',
        [
          'pkeyutl',
          '-verify',
          '-pubin',
          '-inkey',
          `${keyPath}.pub`,
          '-rawin',
          '-in',
          message,
          '-sigfile',
          sigFile,
        ],
        { encoding: 'utf8' },
      );
      expect(out).toMatch(/Signature Verified Successfully/);
    }
  });
});
