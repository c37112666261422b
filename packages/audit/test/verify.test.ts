import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { verifyAuditFile, verifyAuditLines } from '@termgate/audit';
import { FileAuditSink } from '@termgate/audit/adapters';
import { recordHash } from '../src/chain.js';
import { tempDir } from './support/temp-dir.js';

/**
 * Tamper tests: an intact file verifies; every kind of edit is caught and
 * named by the seq where the chain breaks.
 */
describe('verifyAuditFile', () => {
  let dir: ReturnType<typeof tempDir>;
  let file: string;

  beforeEach(() => {
    dir = tempDir();
    file = join(dir.path, 'audit.jsonl');
    const sink = FileAuditSink.open(file);
    for (let i = 1; i <= 6; i += 1)
      sink.append({ event: { action: `test-${i}` }, termgate: { note: `record ${i}` } });
    sink.close();
  });
  afterEach(() => dir.cleanup());

  const lines = (): string[] => readFileSync(file, 'utf8').split('\n').slice(0, -1);
  const save = (edited: string[], trailingNewline = true): void =>
    writeFileSync(file, edited.join('\n') + (trailingNewline ? '\n' : ''));
  /** Re-seals a record the way an attacker who knows the scheme would. */
  const reseal = (line: string, prevHash: string): string => {
    const body = `${line.replace(/,"hash":"[0-9a-f]{64}"\}$/, '')}}`;
    return `${body.slice(0, -1)},"hash":"${recordHash(prevHash, body)}"}`;
  };
  const hashOf = (line: string): string => (JSON.parse(line) as { hash: string }).hash;

  test('an intact file passes and reports its head', () => {
    const result = verifyAuditFile(file);
    expect(result).toEqual({ ok: true, records: 6, head: { seq: 6, hash: hashOf(lines()[5]!) } });
  });

  test('an empty file passes with no records', () => {
    writeFileSync(file, '');
    expect(verifyAuditFile(file)).toEqual({ ok: true, records: 0, head: null });
  });

  test('an edited field fails at that seq', () => {
    const edited = lines();
    edited[2] = edited[2]!.replace('record 3', 'record 3 (harmless)');
    save(edited);
    expect(verifyAuditFile(file)).toMatchObject({
      ok: false,
      seq: 3,
      line: 3,
      problem: expect.stringMatching(/edited/),
    });
  });

  test('whitespace added to a record is an edit', () => {
    const edited = lines();
    edited[1] = edited[1]!.replace('"seq":2', '"seq": 2');
    save(edited);
    expect(verifyAuditFile(file)).toMatchObject({
      ok: false,
      seq: 2,
      problem: expect.stringMatching(/edited/),
    });
  });

  test('a deleted record fails at the missing seq', () => {
    const edited = lines();
    edited.splice(3, 1);
    save(edited);
    expect(verifyAuditFile(file)).toMatchObject({
      ok: false,
      seq: 4,
      records: 3,
      problem: expect.stringMatching(/found seq 5 where seq 4 was expected/),
    });
  });

  test('a deleted first record fails at seq 1', () => {
    save(lines().slice(1));
    expect(verifyAuditFile(file)).toMatchObject({ ok: false, seq: 1, line: 1 });
  });

  test('two reordered records fail at the first of them', () => {
    const edited = lines();
    [edited[1], edited[2]] = [edited[2]!, edited[1]!];
    save(edited);
    expect(verifyAuditFile(file)).toMatchObject({
      ok: false,
      seq: 2,
      problem: expect.stringMatching(/reordered/),
    });
  });

  test('a file cut in the middle of its last record fails at that seq', () => {
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.slice(0, text.length - 40));
    expect(verifyAuditFile(file)).toMatchObject({
      ok: false,
      seq: 6,
      problem: expect.stringMatching(/truncated/),
    });
  });

  test('a record cut short inside the file fails at that seq', () => {
    const edited = lines();
    edited[2] = edited[2]!.slice(0, 50);
    save(edited);
    expect(verifyAuditFile(file)).toMatchObject({
      ok: false,
      seq: 3,
      problem: expect.stringMatching(/not valid JSON/),
    });
  });

  test('a missing final newline is a truncated write', () => {
    save(lines(), false);
    expect(verifyAuditFile(file)).toMatchObject({
      ok: false,
      seq: 6,
      problem: expect.stringMatching(/truncated/),
    });
  });

  test('a forged record copied in without a valid hash fails where it was inserted', () => {
    const edited = lines();
    edited.splice(3, 0, edited[2]!.replace('record 3', 'forged'));
    save(edited);
    expect(verifyAuditFile(file)).toMatchObject({
      ok: false,
      seq: 4,
      line: 4,
      problem: expect.stringMatching(/edited/),
    });
  });

  test('a forged record with a recomputed hash fails at the record after it', () => {
    const edited = lines();
    const forged = reseal(
      edited[2]!
        .replace('"seq":3', '"seq":4')
        .replace(/"prev_hash":"[0-9a-f]{64}"/, `"prev_hash":"${hashOf(edited[2]!)}"`),
      hashOf(edited[2]!),
    );
    edited.splice(3, 0, forged);
    save(edited);
    expect(verifyAuditFile(file)).toMatchObject({
      ok: false,
      seq: 5,
      line: 5,
      problem: expect.stringMatching(/found seq 4 where seq 5 was expected/),
    });
  });

  test('a record replaced by a re-sealed edit breaks the link of the next record', () => {
    const edited = lines();
    edited[2] = reseal(edited[2]!.replace('record 3', 'rewritten'), hashOf(edited[1]!));
    save(edited);
    expect(verifyAuditFile(file)).toMatchObject({
      ok: false,
      seq: 4,
      problem: expect.stringMatching(/broken link/),
    });
  });

  test('a blank line is reported where it stands', () => {
    const edited = lines();
    edited.splice(2, 0, '');
    save(edited);
    expect(verifyAuditFile(file)).toMatchObject({
      ok: false,
      seq: 3,
      line: 3,
      problem: expect.stringMatching(/empty line/),
    });
  });

  test('a first record whose prev_hash is not the hash of its nonce is not an anchor', () => {
    const edited = lines();
    edited[0] = reseal(
      edited[0]!.replace(/"nonce":"[0-9a-f]{64}"/, `"nonce":"${'0'.repeat(64)}"`),
      JSON.parse(edited[0]!).prev_hash,
    );
    save(edited);
    expect(verifyAuditFile(file)).toMatchObject({
      ok: false,
      seq: 1,
      problem: expect.stringMatching(/anchor/),
    });
  });

  test('a whole-chain rewrite from some point on verifies: only the head hash kept elsewhere reveals it', () => {
    const original = verifyAuditFile(file);
    const edited = lines();
    let prev = hashOf(edited[3]!);
    for (let i = 4; i < edited.length; i += 1) {
      const line = edited[i]!.replace(/"prev_hash":"[0-9a-f]{64}"/, `"prev_hash":"${prev}"`).replace(
        'record',
        'rewritten',
      );
      edited[i] = reseal(line, prev);
      prev = hashOf(edited[i]!);
    }
    save(edited);
    const rewritten = verifyAuditFile(file);
    expect(rewritten.ok).toBe(true);
    expect(rewritten.ok && original.ok && rewritten.head?.hash !== original.head?.hash).toBe(true);
  });

  test('verifyAuditLines takes in-memory lines', () => {
    expect(verifyAuditLines(lines())).toMatchObject({ ok: true, records: 6 });
    expect(verifyAuditLines(lines().reverse())).toMatchObject({ ok: false, seq: 1 });
  });

  test('a missing file throws the I/O error', () => {
    expect(() => verifyAuditFile(join(dir.path, 'nope.jsonl'))).toThrow(/ENOENT/);
  });
});
