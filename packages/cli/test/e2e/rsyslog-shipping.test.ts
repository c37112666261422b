/**
 * Shipping the audit trail through a real rsyslog (Debian package `rsyslog`):
 * rsyslogd runs with the configuration of examples/rsyslog/termgate-audit.conf
 * (paths moved into a temp directory, with its own work directory and pid
 * file), tails the trail with imfile and writes what it ships to a file. Every
 * record must arrive exactly once, in order, across two rotations, a restart
 * of termgate (a real `termgate serve`) and a restart of rsyslog.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { listTrailDirectory, verifyAuditFile, verifyAuditTrail } from '@termgate/audit';
import { lines, RSYSLOGD, Rsyslog, serve, waitForLines, writeRecords } from './support/rsyslog.js';
import { assertServerBuilt, REPO_ROOT } from './support/wire-server.js';

const EXAMPLE = path.join(REPO_ROOT, 'examples/rsyslog/termgate-audit.conf');

function trailLines(dir: string): string[] {
  return listTrailDirectory(dir).flatMap(lines);
}

describe('rsyslog ships the audit trail (imfile)', () => {
  let dir: string;

  beforeAll(() => {
    // Never skipped: a machine without rsyslog fails here (install the Debian package `rsyslog`).
    expect(existsSync(RSYSLOGD)).toBe(true);
    assertServerBuilt();
    dir = mkdtempSync(path.join(tmpdir(), 'termgate-rsyslog-'));
  });
  afterAll(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  /** A trail directory and an rsyslogd configured by the example, in `dir/name`. */
  function setUp(name: string): { trail: string; file: string; shipped: string; rsyslog: Rsyslog } {
    const base = path.join(dir, name);
    const trail = path.join(base, 'trail');
    mkdirSync(trail, { recursive: true });
    mkdirSync(path.join(base, 'work'));
    const shipped = path.join(base, 'shipped', 'audit.jsonl');
    const conf = path.join(base, 'rsyslog.conf');
    const example = readFileSync(EXAMPLE, 'utf8');
    expect(example).toContain('/var/log/termgate/audit.*.jsonl');
    writeFileSync(
      conf,
      `global(workDirectory="${path.join(base, 'work')}")\n${example
        .replaceAll('/var/log/termgate/', `${trail}/`)
        .replaceAll('/var/log/termgate-shipped/audit.jsonl', shipped)}`,
    );
    return { trail, file: path.join(trail, 'audit.jsonl'), shipped, rsyslog: new Rsyslog(conf, base) };
  }

  test('every record exactly once, in order, across two rotations, a termgate restart and an rsyslog restart', async () => {
    const { trail, file, shipped, rsyslog } = setUp('paced');
    try {
      rsyslog.start();
      await new Promise((resolve) => setTimeout(resolve, 500));
      const shippedSoFar = async () => {
        const expected = trailLines(trail);
        expect(await waitForLines(shipped, expected.length, rsyslog)).toEqual(expected);
      };

      await writeRecords(file, 10, 'first', 'first');
      await shippedSoFar();
      // Rotation 1.
      await writeRecords(file, 10, 'second', 'first');
      await shippedSoFar();
      // termgate restarts: a real `termgate serve` continues the trail (non-ASCII and quotes too).
      await serve(file, ['echo "straße ✓"', 'true'], ['--audit-rotate-size', '1G']);
      await shippedSoFar();
      // rsyslog restarts; what is written while it is down is shipped when it is back.
      await rsyslog.stop();
      await writeRecords(file, 5, 'while-rsyslog-is-down');
      // Shipping never gates a command: with rsyslog down, termgate runs commands as usual.
      expect(await serve(file, ['echo shipper-down', 'exit 3'])).toEqual([0, 3]);
      rsyslog.start();
      await shippedSoFar();
      // Rotation 2, and a last server.
      await writeRecords(file, 10, 'third', 'first');
      await serve(file, ['echo last']);

      const files = listTrailDirectory(trail);
      expect(files).toHaveLength(3);
      const expected = trailLines(trail);
      expect(verifyAuditTrail(files)).toMatchObject({ ok: true, records: expected.length });
      const received = await waitForLines(shipped, expected.length, rsyslog);
      expect(received).toEqual(expected);
      // What arrived is itself the whole chain, byte for byte: it verifies as one file.
      expect(verifyAuditFile(shipped)).toMatchObject({ ok: true, records: expected.length });
    } finally {
      await rsyslog.stop();
    }
  });

  test('segments made faster than rsyslog reads them: every record once, each segment in order', async () => {
    const { trail, file, shipped, rsyslog } = setUp('burst');
    try {
      rsyslog.start();
      await new Promise((resolve) => setTimeout(resolve, 500));
      // A rotation every ~10 records, within milliseconds.
      await writeRecords(file, 60, 'burst', 2_500);
      const files = listTrailDirectory(trail);
      expect(files.length).toBeGreaterThan(4);
      const expected = trailLines(trail);
      const received = await waitForLines(shipped, expected.length, rsyslog);
      expect(received).toHaveLength(expected.length);
      expect([...received].sort()).toEqual([...expected].sort());
      for (const segment of files) {
        const mine = new Set(lines(segment));
        expect(received.filter((line) => mine.has(line))).toEqual(lines(segment));
      }
    } finally {
      await rsyslog.stop();
    }
  });
});
