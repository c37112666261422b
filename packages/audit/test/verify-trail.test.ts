import * as fs from 'node:fs';
import { basename, join } from 'node:path';
import { listTrailDirectory, verifyAuditTrail } from '@termgate/audit';
import { FileAuditSink } from '@termgate/audit/adapters';
import { tempDir } from './support/temp-dir.js';

/** A trail of `count` records rotated into several files; returns its files, oldest first. */
function rotatedTrail(dirPath: string, count = 40): string[] {
  const sink = FileAuditSink.open(join(dirPath, 'audit.jsonl'), { rotation: { maxBytes: 1_500 } });
  for (let n = 0; n < count; n += 1) sink.append({ event: { action: 'terminal-create' }, termgate: { n } });
  sink.close();
  return listTrailDirectory(dirPath);
}

function lines(file: string): string[] {
  return fs.readFileSync(file, 'utf8').split('\n').slice(0, -1);
}

describe('verifyAuditTrail over rotated files', () => {
  let dir: ReturnType<typeof tempDir>;
  let files: string[];

  beforeEach(() => {
    dir = tempDir();
    files = rotatedTrail(dir.path);
    expect(files.length).toBeGreaterThanOrEqual(5);
  });
  afterEach(() => dir.cleanup());

  test('an intact set is one chain; the summary gives each file’s seq range', () => {
    const result = verifyAuditTrail(files);
    expect(result).toMatchObject({ ok: true, records: 40, head: { seq: 40 } });
    expect(result.files.map((f) => f.file)).toEqual(files);
    expect(result.files[0]).toMatchObject({ firstSeq: 1 });
    for (let i = 1; i < result.files.length; i += 1) {
      expect(result.files[i]!.firstSeq).toBe(result.files[i - 1]!.lastSeq! + 1);
    }
  });

  test('a missing file in the middle is named, with the seqs it held', () => {
    const gone = files[2]!;
    const held = lines(gone).map((l) => (JSON.parse(l) as { seq: number }).seq);
    fs.rmSync(gone);
    const result = verifyAuditTrail(listTrailDirectory(dir.path));
    expect(result.ok).toBe(false);
    expect(result.problem).toMatchObject({ file: files[3], line: 1, seq: held[0] });
    expect(result.problem?.message).toBe(
      `missing file ${basename(gone)} between ${files[1]} and ${files[3]}: seq ${held[0]}..${held[held.length - 1]} are missing`,
    );
  });

  test('the first file missing is named', () => {
    fs.rmSync(files[0]!);
    const result = verifyAuditTrail(listTrailDirectory(dir.path));
    expect(result.problem?.message).toMatch(
      new RegExp(
        `^${files[1]} does not start the trail: .* continues file ${basename(files[0]!)}, which is missing`,
      ),
    );
  });

  test('files given out of order are reported by name', () => {
    const swapped = [files[0]!, files[2]!, files[1]!, ...files.slice(3)];
    const result = verifyAuditTrail(swapped);
    expect(result.ok).toBe(false);
    expect(result.problem?.message).toMatch(
      new RegExp(`^files out of order: ${files[1]} \\(from seq \\d+\\) must come before ${files[2]}`),
    );
    const anchorLast = verifyAuditTrail([files[1]!, files[0]!, ...files.slice(2)]);
    expect(anchorLast.problem?.message).toBe(
      `files out of order: ${files[0]} (the trail's first file) must come before ${files[1]}`,
    );
  });

  test('a file cut at a record boundary is named as truncated', () => {
    const cut = files[1]!;
    const kept = lines(cut).slice(0, -2);
    fs.writeFileSync(cut, `${kept.join('\n')}\n`);
    const result = verifyAuditTrail(files);
    expect(result.ok).toBe(false);
    expect(result.problem?.file).toBe(files[2]);
    expect(result.problem?.message).toMatch(new RegExp(`^${cut} is truncated: it ends at seq \\d+`));
  });

  test('a file cut in the middle of a record is named with the line', () => {
    const cut = files[1]!;
    const text = fs.readFileSync(cut, 'utf8');
    fs.writeFileSync(cut, text.slice(0, text.length - 20));
    const result = verifyAuditTrail(files);
    expect(result.problem).toMatchObject({ file: cut, line: lines(files[1]!).length + 1 });
    expect(result.problem?.message).toMatch(/truncated record/);
  });

  test('an edited record in a rotated file is named with its file and line', () => {
    const edited = files[3]!;
    fs.writeFileSync(edited, fs.readFileSync(edited, 'utf8').replace('"n":', '"n" :'));
    const result = verifyAuditTrail(files);
    expect(result.problem).toMatchObject({ file: edited, line: 1 });
    expect(result.problem?.message).toMatch(/hash mismatch/);
  });

  test('a file from another trail in the set is not one chain', () => {
    const other = tempDir();
    try {
      const foreign = rotatedTrail(other.path, 3);
      const result = verifyAuditTrail([...files, foreign[0]!]);
      expect(result.problem?.message).toMatch(/starts a new trail \(its first record is an anchor\)/);
    } finally {
      other.cleanup();
    }
  });

  test('a directory with two trails is refused, naming both; other files next to segments are ignored', () => {
    fs.writeFileSync(join(dir.path, 'report.html'), '');
    expect(listTrailDirectory(dir.path)).toEqual(files);
    fs.renameSync(files[0]!, join(dir.path, 'other.20261201T000000000Z.jsonl'));
    expect(() => listTrailDirectory(dir.path)).toThrow(/several trails \(audit\.jsonl, other\.jsonl\)/);
  });

  test('a directory without segments: its one .jsonl file', () => {
    const plain = tempDir();
    try {
      fs.writeFileSync(join(plain.path, 'audit.jsonl'), '');
      fs.writeFileSync(join(plain.path, 'audit.jsonl.lock'), '');
      fs.writeFileSync(join(plain.path, 'notes.txt'), '');
      expect(listTrailDirectory(plain.path)).toEqual([join(plain.path, 'audit.jsonl')]);
      fs.writeFileSync(join(plain.path, 'b.jsonl'), '');
      expect(() => listTrailDirectory(plain.path)).toThrow(/several trails \(audit\.jsonl, b\.jsonl\)/);
    } finally {
      plain.cleanup();
    }
  });
});
