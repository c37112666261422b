/**
 * The trail's export as OTLP logs (docs/AUDIT.md, "OpenTelemetry export"), over
 * real HTTP to a receiver in the test that decodes the protobuf with the
 * OpenTelemetry protocol's definitions (test-support/otlp-receiver.ts):
 * what crossed the wire is what is checked. A real `FileAuditSink` writes
 * the trail.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type AuditEvent,
  type DecisionRecord,
  NO_REDACTION,
  parseCommandRedaction,
  type Redaction,
  sha256Hex,
} from '@termgate/audit';
import { FileAuditSink } from '@termgate/audit/adapters';
import { OtlpLogExporter, TrailChainBroken, TrailCursor, TrailExporter } from '@termgate/audit/otlp';
import { OtlpReceiver } from '../support/otlp-receiver.js';

const SECRET_ARG = 'hunter2-token-value';

function create(
  n: number,
  command = `curl -H "Authorization: ${SECRET_ARG}" https://example.test/${n}`,
): AuditEvent {
  const record: DecisionRecord = {
    event: {
      kind: 'event',
      category: ['process'],
      type: ['start'],
      action: 'terminal-create',
      outcome: n % 3 === 0 ? 'failure' : 'success',
      reason: n % 3 === 0 ? `\`${command}\` matched deny rule no-curl` : `\`${command}\` by curl`,
    },
    process: { command_line: command, args: command.split(' '), working_directory: '/work/project' },
    rule: { id: [n % 3 === 0 ? 'no-curl' : 'curl'] },
    termgate: {
      terminal_id: `term-${n}`,
      verb: 'create',
      decision: n % 3 === 0 ? 'deny' : 'allow',
      env_names: ['API_TOKEN'],
      subcommands: [
        { program: command.split(' ')[0]!, argv: command.split(' '), via: [] } as { program: string },
      ],
    },
  };
  return record as unknown as AuditEvent;
}

function exit(n: number, code: number): AuditEvent {
  return {
    event: {
      kind: 'event',
      category: ['process'],
      type: ['end'],
      action: 'terminal-exit',
      outcome: 'success',
    },
    process: { pid: 4000 + n, exit_code: code },
    termgate: { terminal_id: `term-${n}`, total_bytes: 12, dropped_bytes: 0 },
  } as unknown as AuditEvent;
}

describe('termgate audit export to an OTLP/HTTP collector', () => {
  let dir: string;
  let trail: string;
  let cursorPath: string;
  let receiver: OtlpReceiver;
  let sink: FileAuditSink;
  let exporter: OtlpLogExporter;

  const trailRecords = (): Record<string, unknown>[] =>
    readFileSync(trail, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);

  const exportNow = (redaction: Redaction = NO_REDACTION): Promise<number> =>
    new TrailExporter({
      files: () => [trail],
      cursor: TrailCursor.open(cursorPath),
      send: (logs) => exporter.send(logs),
      redaction,
    }).exportAvailable();

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'termgate-otlp-'));
    trail = join(dir, 'audit.jsonl');
    cursorPath = join(dir, 'audit.otlp-cursor');
    receiver = new OtlpReceiver();
    await receiver.start();
    exporter = new OtlpLogExporter({ url: receiver.url, timeoutMillis: 3_000, serviceVersion: '0.1.0' });
    sink = FileAuditSink.open(trail);
  });

  afterEach(async () => {
    sink.close();
    await exporter.shutdown();
    await receiver.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('every record arrives as one log with its seq and hashes, ECS names and semantic conventions', async () => {
    for (let n = 1; n <= 4; n += 1) sink.append(create(n));
    sink.append(exit(1, 7));
    expect(await exportNow()).toBe(5);
    const records = trailRecords();
    expect(receiver.seqs()).toEqual(records.map((r) => r.seq));
    receiver.logs.forEach((log, i) => {
      expect(log.attributes['termgate.hash']).toBe(records[i]!.hash);
      expect(log.attributes['termgate.prev_hash']).toBe(records[i]!.prev_hash);
      // Links: a collector can check its copy without the trail.
      if (i > 0)
        expect(log.attributes['termgate.prev_hash']).toBe(receiver.logs[i - 1]!.attributes['termgate.hash']);
      expect(log.resource['service.name']).toBe('termgate');
      expect(log.scope).toBe('termgate.audit');
    });
    const first = receiver.logs[0]!;
    expect(first.eventName).toBe('termgate.terminal-create');
    expect(first.attributes['event.name']).toBe('termgate.terminal-create');
    expect(first.attributes['event.action']).toBe('terminal-create');
    expect(first.attributes['process.command_line']).toBe(
      (records[0]!.process as { command_line: string }).command_line,
    );
    expect(first.attributes['process.command_args']).toEqual(
      (records[0]!.process as { args: string[] }).args,
    );
    expect(first.attributes['rule.id']).toEqual(['curl']);
    expect(first.attributes['termgate.decision']).toBe('allow');
    expect(first.attributes['termgate.env_names']).toEqual(['API_TOKEN']);
    expect(JSON.parse(first.attributes['termgate.subcommands'] as string)).toEqual([
      { program: 'curl', argv: (records[0]!.process as { args: string[] }).args, via: [] },
    ]);
    expect(first.timeUnixNano).toBe(`${Date.parse(records[0]!['@timestamp'] as string)}000000`);
    expect(first.severityText).toBe('INFO');
    // A deny is a warning.
    expect(receiver.logs[2]!.severityText).toBe('WARN');
    const exitLog = receiver.logs[4]!;
    expect(exitLog.attributes['process.exit.code']).toBe(7);
    expect(exitLog.attributes['process.exit_code']).toBe(7);
    expect(exitLog.attributes['process.pid']).toBe(4001);
  });

  test('restart resumes from the cursor: nothing sent twice, nothing skipped', async () => {
    for (let n = 1; n <= 3; n += 1) sink.append(create(n));
    expect(await exportNow()).toBe(3);
    expect(JSON.parse(readFileSync(cursorPath, 'utf8'))).toEqual({ seq: 3, hash: trailRecords()[2]!.hash });
    // A second exporter process: nothing new, nothing sent.
    expect(await exportNow()).toBe(0);
    for (let n = 4; n <= 6; n += 1) sink.append(create(n));
    expect(await exportNow()).toBe(3);
    expect(receiver.seqs()).toEqual([1, 2, 3, 4, 5, 6]);
  });

  test('a collector that refuses or is gone stops only the export; afterwards every record arrives', async () => {
    sink.append(create(1));
    await exportNow();
    receiver.failing = true;
    // The trail stays first: records are written while the collector refuses.
    sink.append(create(2));
    sink.append(create(3));
    await expect(exportNow()).rejects.toThrow();
    expect(receiver.refused).toBeGreaterThan(0);
    expect(JSON.parse(readFileSync(cursorPath, 'utf8')).seq).toBe(1);
    // Gone altogether (connection refused).
    const port = receiver.port;
    await receiver.stop();
    sink.append(create(4));
    await expect(exportNow()).rejects.toThrow();
    expect(JSON.parse(readFileSync(cursorPath, 'utf8')).seq).toBe(1);
    receiver.failing = false;
    await receiver.start(port);
    expect(await exportNow()).toBe(3);
    expect(receiver.seqs()).toEqual(trailRecords().map((r) => r.seq));
  });

  test('--redact-command hash: no command text or argument crosses the wire, the sha256 does', async () => {
    sink.append(create(1));
    sink.append(create(3));
    await exportNow({ command: parseCommandRedaction('hash'), dropArgs: false });
    const wire = Buffer.concat(receiver.bodies).toString('latin1');
    expect(wire).not.toContain(SECRET_ARG);
    expect(wire).not.toContain('example.test');
    const line = (trailRecords()[0]!.process as { command_line: string }).command_line;
    const log = receiver.logs[0]!;
    expect(log.attributes['process.command_line']).toBe(`sha256:${sha256Hex(line)}`);
    expect(log.attributes['process.command_args']).toEqual(['curl']);
    expect(JSON.parse(log.attributes['termgate.subcommands'] as string)).toEqual([
      { program: 'curl', via: [] },
    ]);
    expect(receiver.logs[1]!.attributes['event.reason']).toBe('`[redacted]` matched deny rule no-curl');
    // The trail itself is untouched.
    expect(readFileSync(trail, 'utf8')).toContain(SECRET_ARG);
  });

  test('--redact-command cut:N keeps the first N characters only', async () => {
    sink.append(create(1));
    await exportNow({ command: parseCommandRedaction('cut:7'), dropArgs: false });
    const wire = Buffer.concat(receiver.bodies).toString('latin1');
    expect(wire).not.toContain(SECRET_ARG);
    expect(receiver.logs[0]!.attributes['process.command_line']).toBe('curl -H…');
  });

  test('--redact-args drops argument values and keeps the command line', async () => {
    sink.append(create(1, 'deploy --password s3cr3t-value'));
    await exportNow({ command: { kind: 'keep' }, dropArgs: true });
    const log = receiver.logs[0]!;
    expect(log.attributes['process.command_args']).toEqual(['deploy']);
    expect(JSON.parse(log.attributes['termgate.subcommands'] as string)).toEqual([
      { program: 'deploy', via: [] },
    ]);
    expect(log.attributes['process.command_line']).toBe('deploy --password s3cr3t-value');
  });

  test('an edited record stops the export: nothing of its batch is sent', async () => {
    for (let n = 1; n <= 3; n += 1) sink.append(create(n));
    sink.close();
    const lines = readFileSync(trail, 'utf8').split('\n');
    lines[1] = lines[1]!.replace('term-2', 'term-9');
    writeFileSync(trail, lines.join('\n'));
    await expect(exportNow()).rejects.toThrow(TrailChainBroken);
    expect(receiver.seqs()).toEqual([]);
    sink = FileAuditSink.open(join(dir, 'other.jsonl'));
  });

  test('a cursor that names another record than the trail holds is refused', async () => {
    sink.append(create(1));
    sink.append(create(2));
    writeFileSync(cursorPath, JSON.stringify({ seq: 1, hash: 'f'.repeat(64) }));
    await expect(exportNow()).rejects.toThrow(/not the record the cursor says was exported/);
    writeFileSync(cursorPath, 'not json');
    expect(() => TrailCursor.open(cursorPath)).toThrow(/not JSON/);
    expect(receiver.seqs()).toEqual([]);
  });
});
