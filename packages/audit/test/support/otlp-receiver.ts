/**
 * An OTLP/HTTP logs receiver for tests: a real HTTP server on loopback that
 * decodes each `POST /v1/logs` body (protobuf `ExportLogsServiceRequest`)
 * with protobufjs and the OpenTelemetry protocol's own definitions
 * (`otlp-proto/`, copied from open-telemetry/opentelemetry-proto v1.11.0,
 * Apache-2.0), independent of the SDK that encoded it. It keeps the raw
 * bodies (to check what crossed the wire byte for byte) and the decoded log
 * records. `failing` makes it answer 503 without keeping anything, as a
 * collector that is down for maintenance.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import protobuf from 'protobufjs';

const PROTO_DIR = join(import.meta.dirname, 'otlp-proto');

function loadRequestType(): protobuf.Type {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => join(PROTO_DIR, target);
  root.loadSync('opentelemetry/proto/collector/logs/v1/logs_service.proto', { keepCase: false });
  return root.lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest');
}

/** One decoded log record, with its resource's and scope's names. */
export interface ReceivedLog {
  readonly eventName: string | undefined;
  readonly severityText: string | undefined;
  readonly severityNumber: number | undefined;
  readonly timeUnixNano: string | undefined;
  readonly body: unknown;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly resource: Readonly<Record<string, unknown>>;
  readonly scope: string | undefined;
}

type AnyValue = {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: AnyValue[] };
  kvlistValue?: { values?: KeyValue[] };
  bytesValue?: string;
};
type KeyValue = { key: string; value?: AnyValue };

function plain(value: AnyValue | undefined): unknown {
  if (value === undefined) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(plain);
  if (value.kvlistValue !== undefined) return attributesOf(value.kvlistValue.values);
  if (value.bytesValue !== undefined) return value.bytesValue;
  return undefined;
}

function attributesOf(list: readonly KeyValue[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of list ?? []) out[key] = plain(value);
  return out;
}

export class OtlpReceiver {
  /** Every accepted request body, as received. */
  readonly bodies: Buffer[] = [];
  readonly logs: ReceivedLog[] = [];
  /** Requests answered 503 while failing. */
  refused = 0;
  failing = false;
  private server: Server | null = null;
  private readonly type = loadRequestType();

  /** Listens on 127.0.0.1 (`port` 0: any free port; a port again after `stop`: a restart). */
  async start(port = 0): Promise<void> {
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        if (request.method !== 'POST' || request.url !== '/v1/logs') {
          response.writeHead(404).end();
          return;
        }
        if (this.failing) {
          this.refused += 1;
          response.writeHead(503).end();
          return;
        }
        const body = Buffer.concat(chunks);
        let decoded: protobuf.Message;
        try {
          decoded = this.type.decode(body);
        } catch {
          response.writeHead(400).end();
          return;
        }
        this.bodies.push(body);
        this.keep(decoded);
        response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      });
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
  }

  get port(): number {
    if (this.server === null) throw new Error('the receiver is not listening');
    return (this.server.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/v1/logs`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server === null) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** `termgate.seq` of every received log, in arrival order. */
  seqs(): number[] {
    return this.logs.map((log) => log.attributes['termgate.seq'] as number);
  }

  private keep(decoded: protobuf.Message): void {
    const request = this.type.toObject(decoded, { longs: String, bytes: String }) as {
      resourceLogs?: {
        resource?: { attributes?: KeyValue[] };
        scopeLogs?: {
          scope?: { name?: string };
          logRecords?: {
            eventName?: string;
            severityText?: string;
            severityNumber?: number;
            timeUnixNano?: string;
            body?: AnyValue;
            attributes?: KeyValue[];
          }[];
        }[];
      }[];
    };
    for (const resourceLogs of request.resourceLogs ?? []) {
      const resource = attributesOf(resourceLogs.resource?.attributes);
      for (const scopeLogs of resourceLogs.scopeLogs ?? []) {
        for (const record of scopeLogs.logRecords ?? []) {
          this.logs.push({
            eventName: record.eventName,
            severityText: record.severityText,
            severityNumber: record.severityNumber,
            timeUnixNano: record.timeUnixNano,
            body: plain(record.body),
            attributes: attributesOf(record.attributes),
            resource,
            scope: scopeLogs.scope?.name,
          });
        }
      }
    }
  }
}
