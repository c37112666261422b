import { generateKeyPairSync } from 'node:crypto';
import * as fs from 'node:fs';
import { join } from 'node:path';
import {
  generateSigningKeyPair,
  keyId,
  listTrailDirectory,
  loadPublicKeys,
  loadSigningKey,
  signCheckpoint,
  verifyAuditTrail,
} from '@termgate/audit';
import { CheckpointingAuditSink, FileAuditSink } from '@termgate/audit/adapters';
import { records } from './support/audit-file.js';
import { rewriteFrom } from './support/forge.js';
import { tempDir } from './support/temp-dir.js';

describe('signed checkpoints', () => {
  let dir: ReturnType<typeof tempDir>;
  let file: string;
  let keyPath: string;

  beforeEach(() => {
    dir = tempDir();
    file = join(dir.path, 'audit.jsonl');
    fs.mkdirSync(join(dir.path, 'keys'), { mode: 0o700 });
    keyPath = join(dir.path, 'keys', 'audit-key');
    generateSigningKeyPair(keyPath);
  });
  afterEach(() => dir.cleanup());

  /** 12 records with a checkpoint after every 5, and one at close: checkpoints at seq 6, 12 and 15. */
  function signedTrail(): string[] {
    const sink = new CheckpointingAuditSink(FileAuditSink.open(file), {
      privateKey: loadSigningKey(keyPath),
      everyRecords: 5,
    });
    for (let n = 0; n < 12; n += 1) sink.append({ event: { action: 'terminal-create' }, termgate: { n } });
    sink.close();
    return fs.readFileSync(file, 'utf8').split('\n').slice(0, -1);
  }

  const keys = () => loadPublicKeys([`${keyPath}.pub`]);

  test('keygen writes the private key 0600 and the public key 0644, and never overwrites', () => {
    expect(fs.statSync(keyPath).mode & 0o777).toBe(0o600);
    expect(fs.statSync(`${keyPath}.pub`).mode & 0o777).toBe(0o644);
    const before = fs.readFileSync(keyPath);
    expect(() => generateSigningKeyPair(keyPath)).toThrow(/EEXIST/);
    expect(fs.readFileSync(keyPath)).toEqual(before);
  });

  test('a private key readable by others, or not Ed25519, is refused', () => {
    fs.chmodSync(keyPath, 0o640);
    expect(() => loadSigningKey(keyPath)).toThrow(
      /accessible by group or others \(mode 640\): run chmod 600/,
    );
    const rsa = join(dir.path, 'rsa.pem');
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    fs.writeFileSync(rsa, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    expect(() => loadSigningKey(rsa)).toThrow(/is a rsa key, not Ed25519/);
  });

  test('checkpoints every N records and at stop; an intact trail is signed to its end', () => {
    const lines = signedTrail();
    const all = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const at = all.filter((r) => 'checkpoint' in r).map((r) => r.seq);
    expect(at).toEqual([6, 12, 15]);
    expect(all[14]).toMatchObject({
      event: { action: 'audit-checkpoint' },
      checkpoint: { alg: 'ed25519', key_id: keyId(loadSigningKey(keyPath)), seq: 14 },
    });
    const result = verifyAuditTrail([file], { publicKeys: keys() });
    expect(result).toMatchObject({
      ok: true,
      records: 15,
      checkpoints: { count: 3, checked: true, signedThrough: 14, unsigned: 0, final: true, finalCount: 1 },
    });
    expect(all.map((r) => (r.checkpoint as { final?: boolean } | undefined)?.final)).toEqual([
      ...Array(14).fill(undefined),
      true,
    ]);
  });

  test('a trail cut at any record boundary before its end does not end with a final checkpoint', () => {
    const lines = signedTrail();
    for (let kept = 1; kept <= lines.length; kept += 1) {
      fs.writeFileSync(file, `${lines.slice(0, kept).join('\n')}\n`);
      const result = verifyAuditTrail([file], { publicKeys: keys() });
      // Every cut is an intact chain with valid signatures: only the final mark tells it from the whole.
      expect([kept, result.ok, result.checkpoints.final]).toEqual([kept, true, kept === lines.length]);
    }
    // The cut of issue 28: right after the checkpoint at seq 12, so nothing is unsigned.
    fs.writeFileSync(file, `${lines.slice(0, 12).join('\n')}\n`);
    expect(verifyAuditTrail([file], { publicKeys: keys() }).checkpoints).toMatchObject({
      unsigned: 0,
      final: false,
      finalCount: 0,
    });
  });

  test('the final mark can be neither added to a checkpoint nor removed from one without the key', () => {
    const lines = signedTrail();
    const added = rewriteFrom(lines, 11, (record) => ({
      ...record,
      checkpoint: { ...(record.checkpoint as object), final: true },
    }));
    fs.writeFileSync(file, `${added.slice(0, 12).join('\n')}\n`);
    expect(verifyAuditTrail([file])).toMatchObject({ ok: true }); // the chain alone cannot tell
    expect(verifyAuditTrail([file], { publicKeys: keys() }).problem).toMatchObject({
      seq: 12,
      message: expect.stringMatching(/signature does not verify/),
    });
    const removed = rewriteFrom(lines, 14, (record) => {
      const { final: _final, ...member } = record.checkpoint as Record<string, unknown>;
      return { ...record, checkpoint: member };
    });
    fs.writeFileSync(file, `${removed.join('\n')}\n`);
    expect(verifyAuditTrail([file], { publicKeys: keys() }).problem).toMatchObject({
      seq: 15,
      message: expect.stringMatching(/signature does not verify/),
    });
    const odd = rewriteFrom(lines, 14, (record) => ({
      ...record,
      checkpoint: { ...(record.checkpoint as object), final: 'yes' },
    }));
    fs.writeFileSync(file, `${odd.join('\n')}\n`);
    expect(verifyAuditTrail([file], { publicKeys: keys() }).problem?.message).toMatch(
      /final is "yes", not true or absent/,
    );
  });

  test('a stop right after a records checkpoint still ends with a final checkpoint', () => {
    const sink = new CheckpointingAuditSink(FileAuditSink.open(file), {
      privateKey: loadSigningKey(keyPath),
      everyRecords: 3,
    });
    for (let n = 0; n < 3; n += 1) sink.append({ event: { action: 'x' }, termgate: { n } });
    sink.close();
    expect(records(file).map((r) => [r.seq, r.checkpoint === undefined ? '-' : r.checkpoint])).toEqual([
      [1, '-'],
      [2, '-'],
      [3, '-'],
      [4, expect.not.objectContaining({ final: true })],
      [5, expect.objectContaining({ seq: 4, final: true })],
    ]);
    expect(verifyAuditTrail([file], { publicKeys: keys() }).checkpoints.final).toBe(true);
  });

  test('a checkpoint re-signed with another key is refused', () => {
    const lines = signedTrail();
    const { privateKey: other } = generateKeyPairSync('ed25519');
    // Re-sign the checkpoint at seq 12 with the attacker's key (and keep the chain valid).
    const forged = rewriteFrom(lines, 11, (record) => ({
      ...record,
      checkpoint: signCheckpoint(other, { seq: 11, hash: (JSON.parse(lines[10]!) as { hash: string }).hash }),
    }));
    fs.writeFileSync(file, `${forged.join('\n')}\n`);
    expect(verifyAuditTrail([file])).toMatchObject({ ok: true }); // the chain alone cannot tell
    const result = verifyAuditTrail([file], { publicKeys: keys() });
    expect(result.ok).toBe(false);
    expect(result.problem).toMatchObject({ seq: 12, line: 12 });
    expect(result.problem?.message).toMatch(/signed by key [0-9a-f]{16}, which is not a given public key/);

    // The same forgery claiming the genuine key id fails the signature check.
    const claimed = rewriteFrom(lines, 11, (record) => ({
      ...record,
      checkpoint: {
        ...signCheckpoint(other, { seq: 11, hash: (JSON.parse(lines[10]!) as { hash: string }).hash }),
        key_id: keyId(loadSigningKey(keyPath)),
      },
    }));
    fs.writeFileSync(file, `${claimed.join('\n')}\n`);
    expect(verifyAuditTrail([file], { publicKeys: keys() }).problem?.message).toMatch(
      /signature does not verify with key .*: forged or re-signed; the last valid checkpoint vouches for seq 1\.\.5/,
    );
  });

  test('a tail rewritten with recomputed hashes is caught at the next checkpoint, back to the last valid one', () => {
    const lines = signedTrail();
    // Rewrite seq 8 (between the checkpoints at 6 and 12), and re-seal everything after it.
    const forged = rewriteFrom(lines, 7, (record) => ({ ...record, termgate: { n: 999 } }));
    fs.writeFileSync(file, `${forged.join('\n')}\n`);
    expect(verifyAuditTrail([file])).toMatchObject({ ok: true, records: 15 });
    const result = verifyAuditTrail([file], { publicKeys: keys() });
    expect(result).toMatchObject({ ok: false, checkpoints: { signedThrough: 5 } });
    expect(result.problem).toMatchObject({ seq: 12 });
    expect(result.problem?.message).toMatch(
      /does not verify .*the last valid checkpoint vouches for seq 1\.\.5$/,
    );
  });

  test('a tail rewritten and its checkpoints dropped leaves unsigned records after the last checkpoint', () => {
    const lines = signedTrail();
    // Drop the checkpoints at 12 and 15 and rewrite seq 8 onwards.
    const withoutCheckpoints = lines.filter((line, i) => i < 11 || !line.includes('"checkpoint"'));
    const forged = rewriteFrom(withoutCheckpoints, 7, (record) => ({ ...record, termgate: { n: 999 } }));
    fs.writeFileSync(file, `${forged.join('\n')}\n`);
    expect(verifyAuditTrail([file], { publicKeys: keys() })).toMatchObject({
      ok: true,
      records: 13,
      checkpoints: { count: 1, signedThrough: 5, unsigned: 7 },
    });
  });

  test('a cut tail is reported as unsigned records after the last checkpoint', () => {
    const lines = signedTrail();
    fs.writeFileSync(file, `${lines.slice(0, 14).join('\n')}\n`); // the stop checkpoint is gone
    expect(verifyAuditTrail([file], { publicKeys: keys() })).toMatchObject({
      ok: true,
      records: 14,
      checkpoints: { count: 2, signedThrough: 11, unsigned: 2 },
    });
  });

  test('a timed checkpoint is written when records were written since the last one', async () => {
    const sink = new CheckpointingAuditSink(FileAuditSink.open(file), {
      privateKey: loadSigningKey(keyPath),
      everyMs: 20,
    });
    sink.append({ event: { action: 'a' } });
    for (let i = 0; i < 200 && !records(file).some((r) => 'checkpoint' in r); i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(records(file).map((r) => r.seq)).toEqual([1, 2]);
    expect(records(file)[1]).toMatchObject({ checkpoint: { seq: 1 } });
    // Nothing new: no further checkpoint.
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(records(file)).toHaveLength(2);
    sink.close();
    // Only the final one, at close.
    expect(records(file).map((r) => r.checkpoint)).toEqual([
      undefined,
      expect.not.objectContaining({ final: true }),
      expect.objectContaining({ seq: 2, final: true }),
    ]);
  });

  test('checkpoints and rotation together: a rotated, signed trail verifies as one', () => {
    const sink = new CheckpointingAuditSink(FileAuditSink.open(file, { rotation: { maxBytes: 1_500 } }), {
      privateKey: loadSigningKey(keyPath),
      everyRecords: 4,
    });
    for (let n = 0; n < 30; n += 1) sink.append({ event: { action: 'x' }, termgate: { n } });
    sink.close();
    const files = listTrailDirectory(dir.path);
    expect(files.length).toBeGreaterThan(2);
    expect(verifyAuditTrail(files, { publicKeys: keys() })).toMatchObject({
      ok: true,
      checkpoints: { checked: true, unsigned: 0 },
    });
  });
});
