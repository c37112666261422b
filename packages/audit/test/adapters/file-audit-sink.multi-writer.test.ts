import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { verifyAuditFile } from '@termgate/audit';
import { FileAuditSink } from '@termgate/audit/adapters';
import { codeOf, records } from '../support/audit-file.js';
import { tempDir } from '../support/temp-dir.js';

// The writer children are Node itself, which cannot run the .ts sources (Node 20): they load the built adapters.
const DIST_INDEX = resolve(import.meta.dirname, '../../dist/adapters/index.js');
const WRITER = resolve(import.meta.dirname, 'fixtures/append-writer.mjs');

function runWriter(
  file: string,
  count: number,
  label: string,
  startAt: number,
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((done, failed) => {
    const child = spawn(process.execPath, [WRITER, DIST_INDEX, file, String(count), label, String(startAt)], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', failed);
    child.on('close', (code) => done({ code, stderr }));
  });
}

function lockFile(owner: { pid: number; host?: string }): string {
  return `${JSON.stringify({ pid: owner.pid, host: owner.host ?? hostname(), token: 'feed' })}\n`;
}

describe('FileAuditSink with several writers on one file', () => {
  let dir: ReturnType<typeof tempDir>;
  let file: string;

  beforeEach(() => {
    dir = tempDir();
    file = join(dir.path, 'audit.jsonl');
  });
  afterEach(() => dir.cleanup());

  test('two sinks opened on an empty file: the second links to the first one’s anchor', () => {
    const a = FileAuditSink.open(file);
    const b = FileAuditSink.open(file);
    a.append({ event: { action: 'server-start' }, termgate: { writer: 'a' } });
    b.append({ event: { action: 'server-start' }, termgate: { writer: 'b' } });
    const all = records(file);
    expect(all.map((r) => r.seq)).toEqual([1, 2]);
    expect(all[0]).toHaveProperty('nonce');
    expect(all[1]).not.toHaveProperty('nonce');
    expect(all[1]).toMatchObject({ prev_hash: all[0]?.hash });
    expect(b.head).toEqual({ seq: 2, hash: all[1]?.hash });
    a.close();
    b.close();
    expect(verifyAuditFile(file)).toMatchObject({ ok: true, records: 2 });
  });

  test('two sinks interleaving appends keep one intact chain with both writers’ records', () => {
    const a = FileAuditSink.open(file);
    a.append({ event: { action: 'server-start' }, termgate: { writer: 'a' } });
    const b = FileAuditSink.open(file);
    b.append({ event: { action: 'server-start' }, termgate: { writer: 'b' } });
    const order = ['a', 'a', 'b', 'a', 'b', 'b', 'b', 'a'];
    for (const [n, writer] of order.entries()) {
      (writer === 'a' ? a : b).append({ event: { action: 'x' }, termgate: { writer, n } });
    }
    // The sibling stops after the real server started: the real server goes on.
    b.append({ event: { action: 'server-stop' }, termgate: { writer: 'b' } });
    b.close();
    a.append({ event: { action: 'terminal-create' }, termgate: { writer: 'a' } });
    a.close();

    const all = records(file);
    expect(verifyAuditFile(file)).toEqual({ ok: true, records: 12, head: { seq: 12, hash: all[11]?.hash } });
    expect(all.map((r) => (r.termgate as { writer: string }).writer)).toEqual(['a', 'b', ...order, 'b', 'a']);
  });

  test('two processes appending concurrently keep one intact chain', async () => {
    expect(fs.existsSync(DIST_INDEX)).toBe(true); // run `npx tsc -b packages/policy` first
    const count = 150;
    const startAt = Date.now() + 1_000;
    const results = await Promise.all([
      runWriter(file, count, 'p1', startAt),
      runWriter(file, count, 'p2', startAt),
    ]);
    for (const result of results) expect(result).toEqual({ code: 0, stderr: '' });

    expect(verifyAuditFile(file)).toMatchObject({ ok: true, records: 2 * (count + 1) });
    const all = records(file);
    for (const writer of ['p1', 'p2']) {
      const mine = all.filter((r) => (r.termgate as { writer: string }).writer === writer);
      expect(mine.map((r) => (r.event as { action: string }).action)[0]).toBe('server-start');
      expect(mine.slice(1).map((r) => (r.termgate as { n: number }).n)).toEqual([...Array(count).keys()]);
    }
    expect(all.filter((r) => 'nonce' in r)).toHaveLength(1);
    expect(fs.existsSync(`${file}.lock`)).toBe(false);
  });

  test('a record edited in place by someone else between our appends: the append throws, nothing is written', () => {
    const a = FileAuditSink.open(file);
    const b = FileAuditSink.open(file);
    a.append({ event: { action: 'a' } });
    b.append({ event: { action: 'b' } });
    // Same length, so the size does not change; the edit moves the mtime (set
    // explicitly: a coarse filesystem clock could otherwise leave it equal).
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('"action":"b"', '"action":"B"'));
    const later = new Date(Date.now() + 2_000);
    fs.utimesSync(file, later, later);
    const before = fs.readFileSync(file);
    expect(codeOf(() => a.append({ event: { action: 'c' } }))).toBe('AUDIT_TAIL_CORRUPT');
    expect(codeOf(() => b.append({ event: { action: 'd' } }))).toBe('AUDIT_TAIL_CORRUPT');
    expect(fs.readFileSync(file)).toEqual(before);
    // Fail-stop: later appends fail too.
    expect(codeOf(() => a.append({ event: { action: 'e' } }))).toBe('AUDIT_TAIL_CORRUPT');
    expect(fs.readFileSync(file)).toEqual(before);
    a.close();
    b.close();
  });

  test('a forged record appended after ours (hash recomputed, wrong link): the append throws', () => {
    const a = FileAuditSink.open(file);
    a.append({ event: { action: 'a' } });
    // Another chain's valid record: it seals, but does not link to ours.
    const other = join(dir.path, 'other.jsonl');
    const forger = FileAuditSink.open(other);
    forger.append({ event: { action: 'x' } });
    forger.append({ event: { action: 'forged' } });
    forger.close();
    fs.appendFileSync(file, fs.readFileSync(other, 'utf8').split('\n')[1]!.concat('\n'));
    const before = fs.readFileSync(file);
    expect(() => a.append({ event: { action: 'b' } })).toThrow(/does not chain: at seq 2: broken link/);
    expect(fs.readFileSync(file)).toEqual(before);
    a.close();
  });

  test('a file truncated below what we wrote fails the append', () => {
    const a = FileAuditSink.open(file);
    a.append({ event: { action: 'a' } });
    a.append({ event: { action: 'b' } });
    const first = fs.readFileSync(file, 'utf8').split('\n')[0];
    fs.writeFileSync(file, `${first}\n`);
    expect(codeOf(() => a.append({ event: { action: 'c' } }))).toBe('AUDIT_FILE_REPLACED');
    expect(fs.readFileSync(file, 'utf8')).toBe(`${first}\n`);
    a.close();
  });

  test('a lock file left by a dead process is taken over', () => {
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    expect(dead).toBeGreaterThan(0);
    const sink = FileAuditSink.open(file, { lock: { waitMs: 2_000 } });
    fs.writeFileSync(`${file}.lock`, lockFile({ pid: dead }));
    // Waiting out the lock would throw AUDIT_LOCK_TIMEOUT after 2 s (it is not older than staleMs, 10 s):
    // the append succeeds only because the dead pid's lock is taken over.
    sink.append({ event: { action: 'a' } });
    expect(fs.existsSync(`${file}.lock`)).toBe(false);
    expect(verifyAuditFile(file)).toMatchObject({ ok: true, records: 1 });
    sink.close();
  });

  test('a lock file older than staleMs is taken over even if its pid is alive', () => {
    const sink = FileAuditSink.open(file, { lock: { waitMs: 2_000, staleMs: 1_000 } });
    fs.writeFileSync(`${file}.lock`, lockFile({ pid: process.ppid }));
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(`${file}.lock`, old, old);
    sink.append({ event: { action: 'a' } });
    expect(verifyAuditFile(file)).toMatchObject({ ok: true, records: 1 });
    sink.close();
  });

  test('a lock held by a live process times out without writing, and the sink stays usable', () => {
    const sink = FileAuditSink.open(file, { lock: { waitMs: 100 } });
    sink.append({ event: { action: 'a' } });
    const before = fs.readFileSync(file);
    fs.writeFileSync(`${file}.lock`, lockFile({ pid: process.ppid }));
    expect(() => sink.append({ event: { action: 'b' } })).toThrow(
      /is held by pid \d+ .* nothing was written/,
    );
    expect(codeOf(() => sink.append({ event: { action: 'b' } }))).toBe('AUDIT_LOCK_TIMEOUT');
    expect(fs.readFileSync(file)).toEqual(before);
    fs.unlinkSync(`${file}.lock`);
    sink.append({ event: { action: 'c' } });
    expect(records(file).map((r) => (r.event as { action: string }).action)).toEqual(['a', 'c']);
    expect(verifyAuditFile(file)).toMatchObject({ ok: true, records: 2 });
    sink.close();
  });

  test('a record half-written by a crashed writer is not written over', () => {
    const a = FileAuditSink.open(file);
    a.append({ event: { action: 'a' } });
    fs.appendFileSync(file, '{"seq":2,"prev_hash":"');
    const before = fs.readFileSync(file);
    expect(() => a.append({ event: { action: 'b' } })).toThrow(/truncated record/);
    expect(fs.readFileSync(file)).toEqual(before);
    a.close();
  });
});
