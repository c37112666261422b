/**
 * Rotation against what an attacker plants in the trail directory: names of
 * the next segment taken by a dangling link, a link to a file elsewhere, a
 * directory. The trail goes on in a free name, the link's target is never
 * created or written, and the planted names are recorded as tampering.
 */
import * as fs from 'node:fs';
import { basename, join } from 'node:path';
import { auditField, listTrailDirectory, verifyAuditTrail } from '@termgate/audit';
import { FileAuditSink } from '@termgate/audit/adapters';
import { records } from '../support/audit-file.js';
import { tempDir } from '../support/temp-dir.js';

describe('FileAuditSink rotation with planted names', () => {
  let dir: ReturnType<typeof tempDir>;
  let file: string;

  beforeEach(() => {
    dir = tempDir();
    file = join(dir.path, 'audit.jsonl');
  });
  afterEach(() => dir.cleanup());

  test('a dangling link, a link elsewhere and a directory at the next names: skipped, reported, never followed', () => {
    let now = Date.parse('2026-12-01T10:00:00.000Z');
    const sink = FileAuditSink.open(file, { rotation: { maxAgeMs: 60_000 }, now: () => new Date(now) });
    sink.append({ event: { action: 'a' } });
    // The names the next rotation (at 10:01:00.000) would take.
    const victim = join(dir.path, 'elsewhere.txt');
    fs.symlinkSync(join(dir.path, 'nowhere', 'x'), join(dir.path, 'audit.20261201T100100000Z.jsonl'));
    fs.symlinkSync(victim, join(dir.path, 'audit.20261201T100100000Z-2.jsonl'));
    fs.mkdirSync(join(dir.path, 'audit.20261201T100100000Z-3.jsonl'));
    now += 60_000;
    sink.append({ event: { action: 'b' } });
    sink.append({ event: { action: 'c' } });
    sink.close();

    expect(fs.existsSync(victim)).toBe(false);
    expect(basename(fs.realpathSync(file))).toBe('audit.20261201T100100000Z-4.jsonl');
    const files = listTrailDirectory(dir.path);
    expect(files.map((f) => basename(f))).toEqual([
      'audit.20261201T100000000Z.jsonl',
      'audit.20261201T100100000Z-4.jsonl',
    ]);
    const actions = files.flatMap((f) => records(f)).map((r) => auditField(r, 'event.action'));
    expect(actions).toEqual(['a', 'b', 'audit-tampering', 'c']);
    const tampering = records(file)[1]!;
    expect(tampering).toMatchObject({ event: { kind: 'alert', action: 'audit-tampering' } });
    expect(auditField(tampering, 'event.reason')).toBe(
      'unexpected entries in the trail directory where the next segment was to be created: ' +
        'audit.20261201T100100000Z.jsonl (symbolic link), audit.20261201T100100000Z-2.jsonl (symbolic link), ' +
        'audit.20261201T100100000Z-3.jsonl (directory); skipped to a free name',
    );
    expect(verifyAuditTrail(files)).toMatchObject({ ok: true, records: 4 });
  });

  test('a regular file at the next name (another rotation in the same millisecond) is skipped without a report', () => {
    let now = Date.parse('2026-12-01T10:00:00.000Z');
    const sink = FileAuditSink.open(file, { rotation: { maxAgeMs: 60_000 }, now: () => new Date(now) });
    sink.append({ event: { action: 'a' } });
    fs.writeFileSync(join(dir.path, 'audit.20261201T100100000Z.jsonl'), '', { mode: 0o600 });
    now += 60_000;
    sink.append({ event: { action: 'b' } });
    sink.close();
    expect(basename(fs.realpathSync(file))).toBe('audit.20261201T100100000Z-2.jsonl');
    expect(records(file).map((r) => auditField(r, 'event.action'))).toEqual(['b']);
  });

  test('rotating at every record with planted names ahead: one tampering record per append, no recursion', () => {
    const now = Date.parse('2026-12-01T10:00:00.000Z');
    const sink = FileAuditSink.open(file, { rotation: { maxBytes: 1 }, now: () => new Date(now) });
    sink.append({ event: { action: 'a' } });
    for (let n = 1; n <= 20; n += 1) {
      const name = `audit.20261201T100000000Z${n === 1 ? '' : `-${n}`}.jsonl`;
      if (!fs.existsSync(join(dir.path, name)))
        fs.symlinkSync(join(dir.path, 'nowhere'), join(dir.path, name));
    }
    sink.append({ event: { action: 'b' } });
    sink.append({ event: { action: 'c' } });
    sink.close();
    const files = listTrailDirectory(dir.path);
    const actions = files.flatMap((f) => records(f)).map((r) => auditField(r, 'event.action'));
    expect(actions.filter((a) => a !== 'audit-tampering')).toEqual(['a', 'b', 'c']);
    expect(actions.filter((a) => a === 'audit-tampering').length).toBeLessThanOrEqual(4);
    expect(verifyAuditTrail(files)).toMatchObject({ ok: true });
  });

  test('a second writer opening the trail while links sit at newer segment names: it opens, never follows them, and the trail is one chain', () => {
    let now = Date.parse('2026-12-01T10:00:00.000Z');
    const rotation = { maxBytes: 1 };
    // The first writer made the first segment and has not written to it yet (a server starting up).
    const first = FileAuditSink.open(file, { rotation, now: () => new Date(now) });
    const victim = join(dir.path, 'elsewhere.txt');
    fs.symlinkSync(join(dir.path, 'nowhere', 'x'), join(dir.path, 'audit.20261201T100500000Z.jsonl'));
    fs.symlinkSync(victim, join(dir.path, 'audit.20261201T100600000Z.jsonl'));
    fs.mkdirSync(join(dir.path, 'audit.20261201T100700000Z.jsonl'));
    const second = FileAuditSink.open(file, { rotation, now: () => new Date(now) });
    second.append({ event: { action: 'a' } });
    now += 1;
    first.append({ event: { action: 'b' } });
    second.close();
    first.close();

    expect(fs.existsSync(victim)).toBe(false);
    expect(fs.existsSync(join(dir.path, 'nowhere'))).toBe(false);
    const files = listTrailDirectory(dir.path);
    const actions = files.flatMap((f) => records(f)).map((r) => auditField(r, 'event.action'));
    expect(actions).toEqual(['a', 'b']);
    expect(verifyAuditTrail(files)).toMatchObject({ ok: true, records: 2 });
  });
});
