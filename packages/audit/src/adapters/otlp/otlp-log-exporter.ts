import { SeverityNumber } from '@opentelemetry/api-logs';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  LoggerProvider,
  type LogRecordProcessor,
  type ReadableLogRecord,
  type SdkLogRecord,
} from '@opentelemetry/sdk-logs';
import type { OtlpLogFields } from '../../otlp-fields.js';

export interface OtlpLogExporterOptions {
  /** The OTLP/HTTP logs endpoint (`http://collector:4318/v1/logs`); undefined: the SDK reads `OTEL_EXPORTER_OTLP_LOGS_ENDPOINT`. */
  readonly url?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** One request's deadline, retries included (the SDK's default: 10 s). */
  readonly timeoutMillis?: number;
  /** The resource's `service.version` (termgate's version). */
  readonly serviceVersion?: string;
}

/** Keeps the records a `send` emits, for that `send` to export itself. */
class CollectingProcessor implements LogRecordProcessor {
  readonly records: SdkLogRecord[] = [];
  onEmit(record: SdkLogRecord): void {
    this.records.push(record);
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

const SEVERITY = { INFO: SeverityNumber.INFO, WARN: SeverityNumber.WARN } as const;
/** `ExportResultCode.SUCCESS` of `@opentelemetry/core`. */
const SUCCESS = 0;

/**
 * Sends log records to an OTLP/HTTP collector as protobuf
 * (`@opentelemetry/exporter-logs-otlp-proto`), built by the SDK's
 * `LoggerProvider` (scope `termgate.audit`, resource `service.name:
 * termgate`). `send` resolves only once the collector accepted the whole
 * batch, and rejects when it did not (after the exporter's own retries of
 * 429, 502, 503 and 504 within its deadline): the caller moves its cursor on
 * success only. Nothing is buffered between calls.
 */
export class OtlpLogExporter {
  private readonly processor = new CollectingProcessor();
  private readonly provider: LoggerProvider;
  private readonly exporter: OTLPLogExporter;

  constructor(options: OtlpLogExporterOptions = {}) {
    this.exporter = new OTLPLogExporter({
      ...(options.url !== undefined ? { url: options.url } : {}),
      ...(options.headers !== undefined ? { headers: { ...options.headers } } : {}),
      ...(options.timeoutMillis !== undefined ? { timeoutMillis: options.timeoutMillis } : {}),
    });
    this.provider = new LoggerProvider({
      resource: resourceFromAttributes({
        'service.name': 'termgate',
        ...(options.serviceVersion !== undefined ? { 'service.version': options.serviceVersion } : {}),
      }),
      // A record's ECS fields are many, and a command line may be long (it is capped in the trail).
      logRecordLimits: { attributeCountLimit: 4096 },
      processors: [this.processor],
    });
  }

  async send(logs: readonly OtlpLogFields[]): Promise<void> {
    const logger = this.provider.getLogger('termgate.audit');
    this.processor.records.length = 0;
    for (const log of logs) {
      logger.emit({
        eventName: log.eventName,
        ...(log.timestampMs !== undefined ? { timestamp: log.timestampMs } : {}),
        severityNumber: SEVERITY[log.severity],
        severityText: log.severity,
        body: log.body,
        attributes: log.attributes as Record<string, string | number | boolean | string[]>,
      });
    }
    const batch: ReadableLogRecord[] = this.processor.records.splice(0);
    if (batch.length !== logs.length) throw new Error('the OpenTelemetry SDK dropped log records');
    await new Promise<void>((resolve, reject) => {
      this.exporter.export(batch, (result) => {
        if (result.code === SUCCESS) resolve();
        else reject(result.error ?? new Error('the collector did not accept the logs'));
      });
    });
  }

  async shutdown(): Promise<void> {
    await this.provider.shutdown();
    await this.exporter.shutdown();
  }
}
