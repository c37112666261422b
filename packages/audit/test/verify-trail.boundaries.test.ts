import { createHash, generateKeyPairSync } from 'node:crypto';
import * as fs from 'node:fs';
import { basename, join } from 'node:path';
import {
  keyId,
  listTrailDirectory,
  signCheckpoint,
  verifyAuditLines,
  verifyAuditTrail,
} from '@termgate/audit';
import { FileAuditSink } from '@termgate/audit/adapters';
import { tempDir } from './support/temp-dir.js';

/**
 * The boundaries between rotated files, one forged first record at a time:
 * each way a file can fail to continue the one before it is named with its
 * own sentence, and nothing that links only in part is taken as a link.
 * (verify-trail.test.ts covers whole files missing, cut or reordered.)
 */

type Rec = Record<string, unknown>;
const lines = (file: string): string[] => fs.readFileSync(file, 'utf8').split('\n').slice(0, -1);
const seqOf = (line: string): number => (JSON.parse(line) as { seq: number }).seq;
const hashOf = (line: string): string => (JSON.parse(line) as { hash: string }).hash;
const openFds = (): number => fs.readdirSync('/proc/self/fd').length;

/** Seals `record` (without `hash`) as the writer would: SHA-256 of `prev_hash + "\n" + body`. */
function seal(record: Rec): string {
  const body = JSON.stringify(record);
  const hash = createHash('sha256')
    .update(`${String(record.prev_hash)}\n${body}`)
    .digest('hex');
  return `${body.slice(0, -1)},"hash":"${hash}"}`;
}

/**
 * What a writer of the file can do: edit its first record and re-seal the
 * whole file, each later record linked to the re-sealed one before it (seqs kept).
 */
function forgeFirst(file: string, edit: (record: Rec) => Rec): void {
  const out: string[] = [];
  for (const [n, line] of lines(file).entries()) {
    const { hash: _hash, ...rest } = JSON.parse(line) as Rec;
    const record = n === 0 ? edit(rest) : { ...rest, prev_hash: hashOf(out[n - 1]!) };
    out.push(seal(record));
  }
  fs.writeFileSync(file, `${out.join('\n')}\n`);
}

describe('verifyAuditTrail at file boundaries', () => {
  let dir: ReturnType<typeof tempDir>;
  let files: string[];

  beforeEach(() => {
    dir = tempDir();
    const sink = FileAuditSink.open(join(dir.path, 'audit.jsonl'), { rotation: { maxBytes: 1_500 } });
    for (let n = 0; n < 30; n += 1) sink.append({ event: { action: 'terminal-create' }, termgate: { n } });
    sink.close();
    files = listTrailDirectory(dir.path);
    expect(files.length).toBeGreaterThanOrEqual(4);
  });
  afterEach(() => dir.cleanup());

  const lastSeq = (file: string): number => seqOf(lines(file).at(-1)!);

  test('a first record with the right seq but another prev_hash does not continue the file before', () => {
    forgeFirst(files[2]!, (r) => ({ ...r, prev_hash: 'b'.repeat(64) }));
    const result = verifyAuditTrail(files);
    const seq = lastSeq(files[1]!) + 1;
    expect(result.problem).toEqual({
      file: files[2],
      line: 1,
      seq,
      message: `${files[2]} does not continue ${files[1]}: its first record, seq ${seq}, does not link to the hash of seq ${seq - 1} (a record was replaced, or a file is missing)`,
    });
  });

  test('a first record that links by hash but names an earlier seq is a file out of order or repeated', () => {
    forgeFirst(files[2]!, (r) => ({ ...r, seq: 3 }));
    const result = verifyAuditTrail(files);
    expect(result.problem).toMatchObject({ file: files[2], line: 1 });
    expect(result.problem?.message).toBe(
      `files out of order or repeated: ${files[2]} starts at seq 3, but ${files[1]} already ended at seq ${lastSeq(files[1]!)}`,
    );
    const repeated = verifyAuditTrail([files[0]!, files[1]!, files[1]!]);
    expect(repeated.problem?.message).toBe(
      `files out of order or repeated: ${files[1]} starts at seq ${seqOf(lines(files[1]!)[0]!)}, but ${files[1]} already ended at seq ${lastSeq(files[1]!)}`,
    );
  });

  test('a first record that links by seq and hash but carries a nonce starts a new trail', () => {
    forgeFirst(files[2]!, (r) => ({ ...r, nonce: 'c'.repeat(64) }));
    const result = verifyAuditTrail(files);
    expect(result.ok).toBe(false);
    expect(result.problem?.message).toBe(
      `${files[2]} starts a new trail (its first record is an anchor) after ${files[1]} ended at seq ${lastSeq(files[1]!)}: not one chain`,
    );
  });

  test('a truncated file is named with the exact seqs missing', () => {
    const cut = files[1]!;
    const end = lastSeq(cut);
    fs.writeFileSync(cut, `${lines(cut).slice(0, -2).join('\n')}\n`);
    const result = verifyAuditTrail(files);
    expect(result.problem?.message).toBe(
      `${cut} is truncated: it ends at seq ${end - 2}, but ${files[2]} continues it from seq ${end} (seq ${end - 1}..${end} are missing)`,
    );
  });

  test('a successor that does not name its predecessor: "an earlier file", "(unnamed)"', () => {
    const first = seqOf(lines(files[2]!)[0]!);
    forgeFirst(files[2]!, ({ prev_file: _gone, ...r }) => r);
    expect(verifyAuditTrail([files[2]!]).problem?.message).toBe(
      `${files[2]} does not start the trail: its first record, seq ${first}, continues an earlier file, which is missing (seq 1..${first - 1})`,
    );
    expect(verifyAuditTrail([files[0]!, files[2]!]).problem?.message).toBe(
      `missing file (unnamed) between ${files[0]} and ${files[2]}: seq ${lastSeq(files[0]!) + 1}..${first - 1} are missing`,
    );
  });

  test('an empty file after the gap does not hide the missing file', () => {
    const empty = join(dir.path, 'empty.jsonl');
    fs.writeFileSync(empty, '');
    expect(verifyAuditTrail([files[1]!, empty]).problem?.message).toMatch(
      new RegExp(
        `^${files[1]} does not start the trail: .* continues file ${basename(files[0]!)}, which is missing`,
      ),
    );
    expect(verifyAuditTrail([files[0]!, files[2]!, empty]).problem?.message).toMatch(
      new RegExp(`^missing file ${basename(files[1]!)} between ${files[0]} and ${files[2]}`),
    );
  });

  test('an empty file is refused before later files; last, it is an empty summary', () => {
    const empty = join(dir.path, 'empty.jsonl');
    fs.writeFileSync(empty, '');
    expect(verifyAuditTrail([files[0]!, empty, files[1]!]).problem).toEqual({
      file: empty,
      line: 0,
      seq: lastSeq(files[0]!) + 1,
      message: `${empty} is empty, but later files follow it`,
    });
    const last = verifyAuditTrail([...files, empty]);
    expect(last.ok).toBe(true);
    expect(last.files.at(-1)).toEqual({ file: empty, records: 0, firstSeq: null, lastSeq: null });
    expect(verifyAuditTrail([empty])).toMatchObject({ ok: true, records: 0, head: null });
  });

  test('a successor whose only record is unterminated is reported as truncated, not judged by its content', () => {
    const partial = join(dir.path, 'partial.jsonl');
    fs.writeFileSync(partial, lines(files[2]!)[0]!);
    expect(verifyAuditTrail([files[0]!, partial]).problem).toEqual({
      file: partial,
      line: 1,
      seq: lastSeq(files[0]!) + 1,
      message: 'truncated record: the file ends in the middle of a line',
    });
  });

  test('verifying a trail leaves no file descriptor open', () => {
    const before = openFds();
    for (let n = 0; n < 5; n += 1) verifyAuditTrail(files);
    expect(openFds()).toBe(before);
  });
});

describe('verifyAuditTrail: writers and checkpoints', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => dir.cleanup());

  test('a server that started and did not stop is an open writer; without keys nothing is checked', () => {
    const file = join(dir.path, 'audit.jsonl');
    const sink = FileAuditSink.open(file);
    sink.append({ event: { action: 'server-start' }, process: { pid: 4242 } });
    sink.append({ event: { action: 'terminal-create' } });
    sink.close();
    const result = verifyAuditTrail([file]);
    expect(result.writers.map((w) => ({ pid: w.pid, seq: w.seq }))).toEqual([{ pid: 4242, seq: 1 }]);
    expect(result.checkpoints).toMatchObject({ checked: false, count: 0, unsigned: 2 });
    expect(verifyAuditTrail([file], { publicKeys: new Map() }).checkpoints.checked).toBe(true);
  });

  test('a first record that is a checkpoint is refused; a bad first checkpoint says no earlier one vouches', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const publicKeys = new Map([[keyId(publicKey), publicKey]]);
    const file = join(dir.path, 'audit.jsonl');
    const sink = FileAuditSink.open(file);
    sink.append({ event: { action: 'terminal-create' } });
    sink.append({ event: { action: 'terminal-create' } });
    sink.close();
    const [one, two] = lines(file) as [string, string];
    const anchor = JSON.parse(one) as Rec;
    const { hash: _h, ...body } = anchor;
    const asFirst = seal({
      ...body,
      checkpoint: signCheckpoint(privateKey, { seq: 0, hash: 'd'.repeat(64) }),
    });
    expect(verifyAuditLines([asFirst]).ok).toBe(true);
    fs.writeFileSync(file, `${asFirst}\n`);
    expect(verifyAuditTrail([file], { publicKeys }).problem?.message).toBe(
      'a checkpoint cannot be the first record',
    );

    const { hash: _h2, ...second } = JSON.parse(two) as Rec;
    const forged = signCheckpoint(privateKey, { seq: 1, hash: 'e'.repeat(64) });
    fs.writeFileSync(file, `${one}\n${seal({ ...second, checkpoint: forged })}\n`);
    expect(verifyAuditTrail([file], { publicKeys }).problem?.message).toBe(
      `the checkpoint's signature does not verify with key ${keyId(publicKey)}: forged or re-signed; no earlier checkpoint`,
    );
  });
});

describe('verifyAuditLines over strings', () => {
  test('numbers the lines from 1', () => {
    expect(verifyAuditLines(['{"seq":1}', 'x'])).toMatchObject({ ok: false, line: 1 });
    const dir = tempDir();
    try {
      const file = join(dir.path, 'audit.jsonl');
      const sink = FileAuditSink.open(file);
      sink.append({ event: { action: 'terminal-create' } });
      sink.close();
      expect(verifyAuditLines([...lines(file), 'x'])).toMatchObject({ ok: false, line: 2, seq: 2 });
    } finally {
      dir.cleanup();
    }
  });
});
