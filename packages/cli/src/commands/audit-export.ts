import { statSync } from 'node:fs';
import { listTrailDirectory } from '@termgate/audit';
import {
  defaultCursorPath,
  OtlpLogExporter,
  TrailChainBroken,
  TrailCursor,
  TrailExporter,
} from '@termgate/audit/otlp';
import { durationMs } from '../duration.js';
import { TERMGATE_VERSION } from '../version.js';
import { parseAuditArgs } from './audit-args.js';
import { REDACTION_OPTIONS, redactionFrom } from './audit-redaction.js';
import type { CliIo } from './cli-io.js';
import { UsageError } from './usage.js';

/** The longest wait between two attempts while the collector fails. */
const MAX_BACKOFF_MS = 30_000;

function headersFrom(values: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const value of values) {
    const at = value.indexOf('=');
    if (at <= 0) throw new UsageError(`--header must be NAME=VALUE, not ${JSON.stringify(value)}`);
    headers[value.slice(0, at)] = value.slice(at + 1);
  }
  return headers;
}

/**
 * `termgate audit export FILE|DIR --otlp URL [--cursor FILE] [--follow]
 * [--interval DURATION] [--redact-command keep|hash|cut:N] [--redact-args]
 * [--header NAME=VALUE]...`: sends the trail's records after the cursor to
 * an OTLP/HTTP logs endpoint (protobuf), one log per record, and moves the
 * cursor as the collector accepts them (docs/AUDIT.md, "OpenTelemetry export").
 * A process of its own, beside `serve`: a slow or absent collector never
 * reaches a command or its record.
 *
 * Without `--follow`: exports what the trail holds, exit 0; 1 when the
 * collector failed (the cursor stays at the last accepted record) or the
 * trail does not chain on from the cursor; 2 usage or I/O error. With
 * `--follow`: polls every `--interval` (1s), retries a failing collector
 * with a growing pause (to 30 s), and exits 0 on SIGTERM or SIGINT, 1 when
 * the trail does not chain on.
 */
export async function exportCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const { files: args, values } = parseAuditArgs(argv, {
    otlp: { type: 'string' },
    cursor: { type: 'string' },
    follow: { type: 'boolean' },
    interval: { type: 'string' },
    header: { type: 'string', multiple: true },
    ...REDACTION_OPTIONS,
  });
  const env = process.env;
  const url = values.otlp;
  if (
    (url === undefined || url === '') &&
    !env.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT &&
    !env.OTEL_EXPORTER_OTLP_ENDPOINT
  ) {
    throw new UsageError('export needs --otlp URL (or OTEL_EXPORTER_OTLP_LOGS_ENDPOINT)');
  }
  const redaction = redactionFrom(values);
  const intervalMs = values.interval === undefined ? 1000 : durationMs(values.interval);
  if (intervalMs === null || intervalMs <= 0)
    throw new UsageError('--interval must be a duration like 1s or 500ms');
  const headers = headersFrom(values.header ?? []);
  const trail = args[0]!;
  const isDirectory = statSync(trail).isDirectory();
  const cursor = TrailCursor.open(values.cursor ?? defaultCursorPath(trail, isDirectory));
  const sender = new OtlpLogExporter({
    ...(url !== undefined && url !== '' ? { url } : {}),
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    serviceVersion: TERMGATE_VERSION,
  });
  const exporter = new TrailExporter({
    files: () => (isDirectory ? listTrailDirectory(trail) : [trail]),
    cursor,
    send: (logs) => sender.send(logs),
    redaction,
  });
  const at = (): string => `cursor at seq ${cursor.position?.seq ?? 0}`;
  try {
    if (!values.follow) {
      try {
        const sent = await exporter.exportAvailable();
        io.stdout.write(`exported ${sent} records; ${at()}\n`);
        return 0;
      } catch (error) {
        io.stderr.write(`termgate audit export: ${(error as Error).message}; ${at()}\n`);
        return 1;
      }
    }
    return await follow(exporter, io, intervalMs, at);
  } finally {
    await sender.shutdown();
  }
}

async function follow(
  exporter: TrailExporter,
  io: CliIo,
  intervalMs: number,
  at: () => string,
): Promise<number> {
  let stopping = false;
  let wake: (() => void) | null = null;
  const stop = (): void => {
    stopping = true;
    wake?.();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  let pause = intervalMs;
  let failing = false;
  try {
    while (!stopping) {
      try {
        const sent = await exporter.exportAvailable();
        if (failing || sent > 0) io.stdout.write(`exported ${sent} records; ${at()}\n`);
        failing = false;
        pause = intervalMs;
      } catch (error) {
        if (error instanceof TrailChainBroken) {
          io.stderr.write(`termgate audit export: ${error.message}; ${at()}\n`);
          return 1;
        }
        if (!failing)
          io.stderr.write(`termgate audit export: ${(error as Error).message}; ${at()}; retrying\n`);
        failing = true;
        pause = Math.min(pause * 2, MAX_BACKOFF_MS);
      }
      if (!stopping) await sleep(pause);
    }
    return 0;
  } finally {
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
  }
}
