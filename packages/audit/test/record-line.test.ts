import { cpSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { AuditError, loadPublicKeys, verifyAuditTrail } from '@termgate/audit';
import { FileAuditSink } from '@termgate/audit/adapters';
import { AuditChain } from '../src/chain.js';
import { RecordLine } from '../src/record-line.js';
import { codeOf } from './support/audit-file.js';
import { PINO_TRAIL_EVENTS, PINO_TRAIL_SERVICE } from './support/pino-trail-events.js';
import { tempDir } from './support/temp-dir.js';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'pino-written-trail');
const SEGMENTS = readdirSync(FIXTURE)
  .filter((name) => /^audit\.\d{8}T\d{9}Z\.jsonl$/.test(name))
  .sort();

/** The fixture's lines, oldest first, across its segments. */
function fixtureLines(): string[] {
  return SEGMENTS.flatMap((name) =>
    readFileSync(join(FIXTURE, name), 'utf8')
      .split('\n')
      .filter((line) => line !== ''),
  );
}

describe('RecordLine: the bytes of a record, as the pino-based writer wrote them', () => {
  test('re-writes every record of a trail written through pino byte for byte, from the same events', () => {
    const lines = fixtureLines();
    expect(lines).toHaveLength(13); // 10 events, 2 checkpoints by count, the final one
    const format = new RecordLine(PINO_TRAIL_SERVICE);
    const events = [...PINO_TRAIL_EVENTS];
    let chain: AuditChain | null = null;
    for (const line of lines) {
      const written = JSON.parse(line) as Record<string, unknown>;
      chain ??= AuditChain.start(written.nonce as string);
      const action = (written.event as { action: string }).action;
      // Checkpoints are the sink's own: their body and signature are taken as written.
      const event = action === 'audit-checkpoint' ? { event: written.event } : events.shift()!;
      const sinkFields = {
        ...(written.prev_file === undefined ? {} : { prev_file: written.prev_file }),
        ...(written.checkpoint === undefined ? {} : { checkpoint: written.checkpoint }),
      };
      const at = new Date(written['@timestamp'] as string);
      const sealed = chain.seal(format.format(at, { ...chain.next(), ...sinkFields, ...event }));
      expect(sealed.line).toBe(line);
      chain.commit(sealed.hash);
    }
    expect(events).toEqual([]);
  });

  test('writes the envelope first: log, @timestamp, ecs, service, then the members in their order', () => {
    const line = new RecordLine({ name: 'tg', version: '9' }).format(
      new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6)),
      {
        seq: 1,
        prev_hash: 'p',
        event: { action: 'a' },
        skipped: undefined,
      },
    );
    expect(line).toBe(
      '{"log":{"level":"info"},"@timestamp":"2026-01-02T03:04:05.006Z","ecs":{"version":"8.11.0"},"service":{"name":"tg","version":"9"},"seq":1,"prev_hash":"p","event":{"action":"a"}}',
    );
    expect(new RecordLine().format(new Date(0), { seq: 1 })).toContain(
      ',"service":{"name":"termgate"},"seq":1}',
    );
  });

  test('an event JSON cannot write (a cycle, a BigInt) is AUDIT_INVALID_EVENT', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const format = new RecordLine();
    expect(codeOf(() => format.format(new Date(0), { seq: 1, event: cyclic }))).toBe('AUDIT_INVALID_EVENT');
    expect(codeOf(() => format.format(new Date(0), { seq: 1, n: 1n }))).toBe('AUDIT_INVALID_EVENT');
    expect(() => format.format(new Date(0), { seq: 1, n: 1n })).toThrow(AuditError);
    let thrown: unknown;
    try {
      format.format(new Date(0), { seq: 1, n: 1n });
    } catch (error) {
      thrown = error;
    }
    // It says why, and keeps JSON's own error as the cause.
    expect((thrown as Error).message).toMatch(/^an audit event must be JSON: .*BigInt/);
    expect((thrown as Error).cause).toBeInstanceOf(TypeError);
  });
});

describe('FileAuditSink on a trail written through pino', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => dir.cleanup());

  test('continues it: the whole trail verifies, checkpoints included, and the old bytes stay', () => {
    cpSync(FIXTURE, dir.path, { recursive: true });
    // The trail's path is a link to its newest segment, as rotation leaves it (made here: copies may not keep links).
    symlinkSync(SEGMENTS.at(-1)!, join(dir.path, 'audit.jsonl'));
    const keys = loadPublicKeys([join(dir.path, 'checkpoint-key.pub')]);
    const before = SEGMENTS.map((name) => readFileSync(join(dir.path, name)));
    const sink = FileAuditSink.open(join(dir.path, 'audit.jsonl'), { service: PINO_TRAIL_SERVICE });
    expect(sink.head?.seq).toBe(13);
    sink.append({ event: { action: 'server-start' } });
    sink.close();
    const after = SEGMENTS.map((name) => readFileSync(join(dir.path, name)));
    expect(after.map((bytes, n) => bytes.subarray(0, before[n]!.length))).toEqual(before);
    expect(after.at(-1)!.length).toBeGreaterThan(before.at(-1)!.length);
    const result = verifyAuditTrail(
      SEGMENTS.map((name) => join(dir.path, name)),
      { publicKeys: keys },
    );
    expect(result).toMatchObject({ ok: true, records: 14, checkpoints: { checked: true, count: 3 } });
  });
});
