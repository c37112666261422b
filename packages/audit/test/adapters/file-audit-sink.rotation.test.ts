import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { listTrailDirectory, verifyAuditFile, verifyAuditTrail } from '@termgate/audit';
import { FileAuditSink } from '@termgate/audit/adapters';
import { codeOf, records } from '../support/audit-file.js';
import { tempDir } from '../support/temp-dir.js';

// The writer children are Node itself, which cannot run the .ts sources (Node 20): they load the built adapters.
const DIST_INDEX = resolve(import.meta.dirname, '../../dist/adapters/index.js');
const WRITER = resolve(import.meta.dirname, 'fixtures/append-writer.mjs');

function allRecords(files: readonly string[]): Record<string, unknown>[] {
  return files.flatMap((file) => records(file));
}

describe('FileAuditSink rotation while running', () => {
  let dir: ReturnType<typeof tempDir>;
  let file: string;

  beforeEach(() => {
    dir = tempDir();
    file = join(dir.path, 'audit.jsonl');
  });
  afterEach(() => dir.cleanup());

  test('by size: new segments, each continuing the chain of the previous one; the path links to the current one', () => {
    const sink = FileAuditSink.open(file, { rotation: { maxBytes: 2_000 } });
    for (let n = 0; n < 40; n += 1) sink.append({ event: { action: 'terminal-create' }, termgate: { n } });
    sink.close();
    const files = listTrailDirectory(dir.path);
    expect(files.length).toBeGreaterThanOrEqual(4);
    expect(fs.lstatSync(file).isSymbolicLink()).toBe(true);
    expect(files[files.length - 1]).toBe(fs.realpathSync(file));
    for (const rotated of files.slice(0, -1)) {
      expect(fs.lstatSync(rotated).isFile()).toBe(true);
      expect(basename(rotated)).toMatch(/^audit\.\d{8}T\d{9}Z(-\d+)?\.jsonl$/);
      // A file is rotated once it reached the size: at most one record over it.
      expect(fs.statSync(rotated).size).toBeGreaterThanOrEqual(2_000);
      expect(fs.statSync(rotated).size).toBeLessThan(2_000 + 400);
      expect(fs.statSync(rotated).mode & 0o777).toBe(0o600);
    }
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const all = allRecords(files);
    expect(all.map((r) => r.seq)).toEqual([...Array(40).keys()].map((n) => n + 1));
    expect(all.map((r) => (r.termgate as { n: number }).n)).toEqual([...Array(40).keys()]);
    for (const [index, name] of files.entries()) {
      const first = records(name)[0]!;
      if (index === 0) {
        expect(first).toHaveProperty('nonce');
        expect(first).not.toHaveProperty('prev_file');
      } else {
        expect(first).not.toHaveProperty('nonce');
        expect(first.prev_file).toBe(basename(files[index - 1]!));
        const before = records(files[index - 1]!);
        expect(first.prev_hash).toBe(before[before.length - 1]!.hash);
      }
    }
    expect(verifyAuditTrail(files)).toMatchObject({ ok: true, records: 40, head: { seq: 40 } });
    // The active file alone is not the whole trail, and says so.
    expect(verifyAuditFile(file).ok).toBe(false);
  });

  test('by age: the file is rotated at the first record after it is older than maxAgeMs', () => {
    let now = Date.parse('2026-12-01T10:00:00.000Z');
    const sink = FileAuditSink.open(file, { rotation: { maxAgeMs: 60_000 }, now: () => new Date(now) });
    sink.append({ event: { action: 'a' } });
    now += 59_999;
    sink.append({ event: { action: 'b' } });
    expect(listTrailDirectory(dir.path).map((f) => basename(f))).toEqual(['audit.20261201T100000000Z.jsonl']);
    now += 1;
    sink.append({ event: { action: 'c' } });
    const files = listTrailDirectory(dir.path);
    // Named for the time they were started.
    expect(files.map((f) => basename(f))).toEqual([
      'audit.20261201T100000000Z.jsonl',
      'audit.20261201T100100000Z.jsonl',
    ]);
    expect(records(files[0]!).map((r) => (r.event as { action: string }).action)).toEqual(['a', 'b']);
    expect(records(file).map((r) => (r.event as { action: string }).action)).toEqual(['c']);
    sink.close();
    expect(verifyAuditTrail(files)).toMatchObject({ ok: true, records: 3 });
  });

  test('segments are never renamed: each keeps its name and inode while the trail grows', () => {
    const sink = FileAuditSink.open(file, { rotation: { maxBytes: 800 } });
    const seen = new Map<string, number>();
    for (let n = 0; n < 30; n += 1) {
      sink.append({ event: { action: 'x' }, termgate: { n } });
      for (const segment of listTrailDirectory(dir.path)) {
        const ino = fs.statSync(segment).ino;
        expect(seen.get(segment) ?? ino).toBe(ino);
        seen.set(segment, ino);
      }
    }
    sink.close();
    expect(seen.size).toBeGreaterThan(3);
    expect([...seen.keys()]).toEqual(listTrailDirectory(dir.path));
  });

  test('a restart continues the chain, also when the link to the current segment was lost', () => {
    const first = FileAuditSink.open(file, { rotation: { maxBytes: 500 } });
    for (let n = 0; n < 6; n += 1) first.append({ event: { action: 'x' }, termgate: { n } });
    first.close();
    const again = FileAuditSink.open(file, { rotation: { maxBytes: 500 } });
    again.append({ event: { action: 'after-restart' } });
    again.close();
    expect(verifyAuditTrail(listTrailDirectory(dir.path))).toMatchObject({ ok: true, records: 7 });
    // The crash case: the link is gone (a rotation died between its steps).
    const last = fs.realpathSync(file);
    fs.unlinkSync(file);
    const third = FileAuditSink.open(file, { rotation: { maxBytes: 500 } });
    third.append({ event: { action: 'after-crash' } });
    third.close();
    expect(records(file)[0]).toMatchObject({ seq: 8, prev_file: basename(last) });
    expect(verifyAuditTrail(listTrailDirectory(dir.path))).toMatchObject({ ok: true, records: 8 });
  });

  test('a trail started without rotation: its file is renamed to a segment once, at the first rotation', () => {
    const plain = FileAuditSink.open(file);
    plain.append({ event: { action: 'before' } });
    plain.close();
    const rotating = FileAuditSink.open(file, { rotation: { maxBytes: 100 } });
    rotating.append({ event: { action: 'after' } });
    rotating.close();
    const files = listTrailDirectory(dir.path);
    expect(files).toHaveLength(2);
    expect(records(files[0]!).map((r) => (r.event as { action: string }).action)).toEqual(['before']);
    expect(records(file)[0]).toMatchObject({ seq: 2, prev_file: basename(files[0]!) });
    expect(verifyAuditTrail(files)).toMatchObject({ ok: true, records: 2 });
  });

  test('two sinks on one trail: when one rotates, the other follows into the new file', () => {
    const a = FileAuditSink.open(file, { rotation: { maxBytes: 600 } });
    const b = FileAuditSink.open(file);
    for (let n = 0; n < 30; n += 1) {
      (n % 3 === 0 ? b : a).append({
        event: { action: 'x' },
        termgate: { writer: n % 3 === 0 ? 'b' : 'a', n },
      });
    }
    a.close();
    b.close();
    const files = listTrailDirectory(dir.path);
    expect(files.length).toBeGreaterThan(3);
    expect(allRecords(files).map((r) => (r.termgate as { n: number }).n)).toEqual([...Array(30).keys()]);
    expect(verifyAuditTrail(files)).toMatchObject({ ok: true, records: 30 });
  });

  test('two processes share a trail and rotate it while both write: no record is lost', async () => {
    expect(fs.existsSync(DIST_INDEX)).toBe(true); // run `npx tsc -b packages/policy` first
    const count = 300;
    const startAt = Date.now() + 1_000;
    const run = (label: string) =>
      new Promise<{ code: number | null; stderr: string }>((done, failed) => {
        const child = spawn(
          process.execPath,
          [WRITER, DIST_INDEX, file, String(count), label, String(startAt)],
          {
            stdio: ['ignore', 'ignore', 'pipe'],
            env: { ...process.env, AUDIT_ROTATE_BYTES: '8000' },
          },
        );
        let stderr = '';
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
        });
        child.on('error', failed);
        child.on('close', (code) => done({ code, stderr }));
      });
    const results = await Promise.all([run('p1'), run('p2')]);
    for (const result of results) expect(result).toEqual({ code: 0, stderr: '' });
    const files = listTrailDirectory(dir.path);
    expect(files.length).toBeGreaterThan(10);
    const verdict = verifyAuditTrail(files);
    expect(verdict).toMatchObject({ ok: true, records: 2 * (count + 1) });
    const all = allRecords(files);
    for (const writer of ['p1', 'p2']) {
      const mine = all.filter((r) => (r.termgate as { writer: string }).writer === writer);
      expect(mine.slice(1).map((r) => (r.termgate as { n: number }).n)).toEqual([...Array(count).keys()]);
    }
    expect(fs.existsSync(`${file}.lock`)).toBe(false);
  });

  test('a rename by someone else (not a rotation) still fails the append', () => {
    const sink = FileAuditSink.open(file, { rotation: { maxBytes: 10_000 } });
    sink.append({ event: { action: 'a' } });
    fs.renameSync(file, `${file}.1`);
    fs.writeFileSync(file, '', { mode: 0o600 });
    expect(codeOf(() => sink.append({ event: { action: 'b' } }))).toBe('AUDIT_FILE_REPLACED');
    expect(fs.readFileSync(file, 'utf8')).toBe('');
    sink.close();
  });
});
