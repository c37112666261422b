import { spawnSync } from 'node:child_process';
import * as realFs from 'node:fs';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import { codeOf, records } from '../support/audit-file.js';
import { tempDir } from '../support/temp-dir.js';

/**
 * `fs`, with the writes and fsyncs of the sink going through it, so a test
 * can spy on them. An ES module's imports are read-only bindings that
 * `jest.spyOn` cannot replace, so the sink's modules get a `node:fs` whose
 * `writeSync` and `fsyncSync` call this object's; they are imported after
 * the mock is registered.
 */
const fs = { ...realFs };
jest.unstable_mockModule('node:fs', () => ({
  ...realFs,
  writeSync: ((...args: Parameters<typeof realFs.writeSync>) =>
    fs.writeSync(...args)) as typeof realFs.writeSync,
  fsyncSync: (fd: number) => fs.fsyncSync(fd),
}));
const { verifyAuditFile } = await import('@termgate/audit');
const { FileAuditSink } = await import('@termgate/audit/adapters');

const isRoot = process.getuid?.() === 0;
const onLinux = process.platform === 'linux';

describe('FileAuditSink', () => {
  let dir: ReturnType<typeof tempDir>;
  let file: string;

  beforeEach(() => {
    dir = tempDir();
    file = join(dir.path, 'audit.jsonl');
  });
  afterEach(() => {
    jest.restoreAllMocks();
    dir.cleanup();
  });

  test('writes nested ECS records; the first one anchors the chain to a nonce', () => {
    const sink = FileAuditSink.open(file, {
      service: { version: '1.2.3' },
      now: () => new Date('2026-11-30T12:00:00.000Z'),
    });
    sink.append({ event: { action: 'server-start' }, termgate: { version: '1.2.3' } });
    // The record is in the file as soon as append returns.
    const [first] = records(file);
    expect(first).toMatchObject({
      '@timestamp': '2026-11-30T12:00:00.000Z',
      log: { level: 'info' },
      ecs: { version: expect.any(String) },
      service: { name: 'termgate', version: '1.2.3' },
      seq: 1,
      prev_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      nonce: expect.stringMatching(/^[0-9a-f]{64}$/),
      event: { action: 'server-start' },
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(fs.readFileSync(file, 'utf8')).toMatch(/,"hash":"[0-9a-f]{64}"\}\n$/);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    sink.close();
  });

  test('reopening a file continues its chain', () => {
    const first = FileAuditSink.open(file);
    first.append({ event: { action: 'a' } });
    first.append({ event: { action: 'b' } });
    const head = first.head;
    first.close();

    const second = FileAuditSink.open(file);
    expect(second.head).toEqual(head);
    second.append({ event: { action: 'c' } });
    second.close();

    const all = records(file);
    expect(all.map((r) => r.seq)).toEqual([1, 2, 3]);
    expect(all[2]).toMatchObject({ prev_hash: head?.hash });
    expect(all[2]).not.toHaveProperty('nonce');
    expect(verifyAuditFile(file)).toMatchObject({ ok: true, records: 3 });
  });

  test.each([
    ['a truncated last record', (text: string) => text.slice(0, -20)],
    ['an edited last record', (text: string) => text.replace('"action":"b"', '"action":"B"')],
    ['a last line that is not JSON', (text: string) => `${text}garbage\n`],
  ])('refuses to continue %s and leaves the file alone', (_name, damage) => {
    const sink = FileAuditSink.open(file);
    sink.append({ event: { action: 'a' } });
    sink.append({ event: { action: 'b' } });
    sink.close();
    fs.writeFileSync(file, damage(fs.readFileSync(file, 'utf8')));
    const before = fs.readFileSync(file);
    expect(codeOf(() => FileAuditSink.open(file))).toBe('AUDIT_TAIL_CORRUPT');
    expect(fs.readFileSync(file)).toEqual(before);
  });

  test('a path under a regular file is AUDIT_UNWRITABLE', () => {
    fs.writeFileSync(join(dir.path, 'plain'), '');
    expect(codeOf(() => FileAuditSink.open(join(dir.path, 'plain', 'audit.jsonl')))).toBe('AUDIT_UNWRITABLE');
  });

  test('a directory in place of the file is AUDIT_UNWRITABLE', () => {
    expect(codeOf(() => FileAuditSink.open(dir.path))).toBe('AUDIT_UNWRITABLE');
  });

  test('a read-only directory is AUDIT_UNWRITABLE', () => {
    if (isRoot) {
      // Root writes through any mode bits, so as root (CI) the same open runs
      // as nobody (util-linux setpriv), in a directory nobody owns. It loads
      // the built adapter: the checkout must be readable by other users, as
      // the unprivileged sandbox suite also requires.
      const adapters = join(import.meta.dirname, '..', '..', 'dist', 'adapters', 'index.js');
      const script = `import { FileAuditSink } from ${JSON.stringify(adapters)};
        try { FileAuditSink.open(process.env.AUDIT_FILE).close(); console.log('opened'); }
        catch (error) { console.log(error.code ?? String(error)); }`;
      const openAsNobody = (): string => {
        const child = spawnSync(
          'setpriv',
          ['--reuid=65534', '--regid=65534', '--clear-groups', '--', process.execPath, '--input-type=module'],
          { input: script, encoding: 'utf8', env: { PATH: process.env.PATH, AUDIT_FILE: file } },
        );
        expect(child.error).toBeUndefined();
        expect(child.stderr).toBe('');
        return child.stdout.trim();
      };
      fs.chownSync(dir.path, 65534, 65534);
      fs.chmodSync(dir.path, 0o700);
      expect(openAsNobody()).toBe('opened'); // the control: nobody can write there while it may
      fs.rmSync(file);
      fs.chmodSync(dir.path, 0o500);
      expect(openAsNobody()).toBe('AUDIT_UNWRITABLE');
      expect(fs.existsSync(file)).toBe(false);
      return;
    }
    fs.chmodSync(dir.path, 0o500);
    try {
      expect(codeOf(() => FileAuditSink.open(file))).toBe('AUDIT_UNWRITABLE');
    } finally {
      fs.chmodSync(dir.path, 0o700);
    }
  });

  test('a missing directory is created only with mkdir', () => {
    const nested = join(dir.path, 'a', 'b', 'audit.jsonl');
    expect(codeOf(() => FileAuditSink.open(nested))).toBe('AUDIT_UNWRITABLE');
    FileAuditSink.open(nested, { mkdir: true }).close();
    expect(fs.existsSync(nested)).toBe(true);
  });

  (onLinux ? test : test.skip)(
    'a full device (/dev/full) fails the append with ENOSPC, and every later one',
    () => {
      const sink = FileAuditSink.open('/dev/full');
      expect(() => sink.append({ event: { action: 'a' } })).toThrow(/ENOSPC/);
      expect(codeOf(() => sink.append({ event: { action: 'b' } }))).toBe('AUDIT_WRITE_FAILED');
      sink.close();
    },
  );

  test('a directory removed after start fails the append', () => {
    const sink = FileAuditSink.open(file);
    sink.append({ event: { action: 'a' } });
    fs.rmSync(dir.path, { recursive: true, force: true });
    expect(() => sink.append({ event: { action: 'b' } })).toThrow(/is gone/);
    expect(codeOf(() => sink.append({ event: { action: 'c' } }))).toBe('AUDIT_FILE_REPLACED');
    sink.close();
  });

  test('a file renamed and replaced after start fails the append', () => {
    const sink = FileAuditSink.open(file);
    sink.append({ event: { action: 'a' } });
    fs.renameSync(file, `${file}.1`);
    fs.writeFileSync(file, '');
    expect(codeOf(() => sink.append({ event: { action: 'b' } }))).toBe('AUDIT_FILE_REPLACED');
    expect(fs.readFileSync(file, 'utf8')).toBe('');
    sink.close();
  });

  test('bytes appended by another writer that do not chain fail the append, and every later one', () => {
    const sink = FileAuditSink.open(file);
    sink.append({ event: { action: 'a' } });
    fs.appendFileSync(file, '{"forged":true}\n');
    const before = fs.readFileSync(file);
    expect(() => sink.append({ event: { action: 'b' } })).toThrow(/another writer and does not chain/);
    expect(codeOf(() => sink.append({ event: { action: 'c' } }))).toBe('AUDIT_TAIL_CORRUPT');
    expect(fs.readFileSync(file)).toEqual(before);
    sink.close();
  });

  test('records appended by another sink on the same file are continued, not refused', () => {
    const sink = FileAuditSink.open(file);
    sink.append({ event: { action: 'a' } });
    const other = FileAuditSink.open(file);
    other.append({ event: { action: 'b' } });
    other.close();
    sink.append({ event: { action: 'c' } });
    sink.close();
    expect(records(file).map((r) => r.seq)).toEqual([1, 2, 3]);
    expect(verifyAuditFile(file)).toMatchObject({ ok: true, records: 3 });
  });

  test('a write that fails half-way is cut back, so the file still verifies', () => {
    const sink = FileAuditSink.open(file);
    sink.append({ event: { action: 'a' } });
    const realWrite = fs.writeSync;
    jest
      .spyOn(fs, 'writeSync')
      .mockImplementationOnce(((fd: number, buffer: Buffer) =>
        realWrite(fd, buffer, 0, 10)) as typeof fs.writeSync)
      .mockImplementationOnce(() => {
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      });
    expect(codeOf(() => sink.append({ event: { action: 'b' } }))).toBe('AUDIT_WRITE_FAILED');
    sink.close();
    expect(verifyAuditFile(file)).toMatchObject({ ok: true, records: 1 });
  });

  test('fsync: true fsyncs every record before append returns', () => {
    const fsync = jest.spyOn(fs, 'fsyncSync');
    const sink = FileAuditSink.open(file, { fsync: true });
    const before = fsync.mock.calls.length;
    sink.append({ event: { action: 'a' } });
    sink.append({ event: { action: 'b' } });
    expect(fsync.mock.calls.length - before).toBe(2);
    sink.close();
  });

  test('an fsync failure fails the append and leaves no record behind', () => {
    const sink = FileAuditSink.open(file, { fsync: true });
    jest.spyOn(fs, 'fsyncSync').mockImplementationOnce(() => {
      throw Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
    });
    expect(() => sink.append({ event: { action: 'a' } })).toThrow(/EIO/);
    sink.close();
    expect(fs.readFileSync(file, 'utf8')).toBe('');
  });

  test('an event may not set fields the sink owns', () => {
    const sink = FileAuditSink.open(file);
    expect(codeOf(() => sink.append({ seq: 99 }))).toBe('AUDIT_INVALID_EVENT');
    expect(codeOf(() => sink.append({ hash: 'x' }))).toBe('AUDIT_INVALID_EVENT');
    sink.append({ event: { action: 'a' } });
    expect(records(file).map((r) => r.seq)).toEqual([1]);
    sink.close();
  });

  test('an event JSON cannot write is refused before anything is written; the sink stays usable', () => {
    const sink = FileAuditSink.open(file);
    sink.append({ event: { action: 'a' } });
    const before = fs.readFileSync(file);
    expect(codeOf(() => sink.append({ event: { action: 'b', count: 1n } }))).toBe('AUDIT_INVALID_EVENT');
    expect(fs.readFileSync(file)).toEqual(before);
    sink.append({ event: { action: 'c' } });
    sink.close();
    expect(records(file).map((r) => r.seq)).toEqual([1, 2]);
    expect(verifyAuditFile(file)).toMatchObject({ ok: true, records: 2 });
  });

  test('close is idempotent and append after close throws AUDIT_CLOSED', () => {
    const sink = FileAuditSink.open(file);
    sink.close();
    sink.close();
    expect(codeOf(() => sink.append({ event: { action: 'a' } }))).toBe('AUDIT_CLOSED');
  });
});
