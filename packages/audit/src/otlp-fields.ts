/**
 * One trail record as one OpenTelemetry log record (docs/AUDIT.md,
 * "OpenTelemetry export"), without the SDK: plain values the exporter
 * (`adapters/otlp/`) hands to `Logger.emit`.
 *
 * - Attributes keep every ECS field of the record under its dotted ECS name
 *   (`event.action`, `process.command_line`, `rule.id`, `termgate.decision`,
 *   …): nested objects are flattened, arrays of strings, numbers or booleans
 *   stay arrays, any other array (the parsed `termgate.subcommands`) is one
 *   JSON string.
 * - The chain: `termgate.seq` (integer) and `termgate.hash`,
 *   `termgate.prev_hash`, so a collector's copy can be checked for gaps
 *   (every seq from the first exported on, once) and for links (each
 *   `prev_hash` is the `hash` of the record before).
 * - Semantic conventions where they exist: the event name
 *   `termgate.<event.action>` (as the log record's EventName and as the
 *   `event.name` attribute), `process.command_line`, `process.command_args`,
 *   `process.pid`, `process.exit.code`, `process.working_directory`,
 *   `host.name`, `user.id` (when the record names a user).
 * - Severity: WARN for a deny, an alert or a failure, INFO otherwise.
 *
 * The envelope members the record's own bytes need (`log`, `ecs`,
 * `@timestamp`, `service`, `nonce`, `checkpoint`) are not attributes:
 * `@timestamp` is the log's timestamp, `service` the exporter's resource.
 */

export type OtlpAttributeValue =
  | string
  | number
  | boolean
  | readonly string[]
  | readonly number[]
  | readonly boolean[];

export interface OtlpLogFields {
  readonly eventName: string;
  /** Milliseconds since the epoch, from `@timestamp` (undefined when it is missing or not a time). */
  readonly timestampMs: number | undefined;
  readonly severity: 'INFO' | 'WARN';
  readonly body: string;
  readonly attributes: Readonly<Record<string, OtlpAttributeValue>>;
}

type Json = Readonly<Record<string, unknown>>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Top-level members that are not attributes (see above). */
const ENVELOPE = new Set([
  '@timestamp',
  'log',
  'ecs',
  'service',
  'nonce',
  'checkpoint',
  'seq',
  'hash',
  'prev_hash',
]);

function primitiveArray(values: readonly unknown[]): OtlpAttributeValue | undefined {
  if (values.every((v) => typeof v === 'string')) return values as string[];
  if (values.every((v) => typeof v === 'number' && Number.isFinite(v))) return values as number[];
  if (values.every((v) => typeof v === 'boolean')) return values as boolean[];
  return undefined;
}

function flatten(prefix: string, value: unknown, into: Record<string, OtlpAttributeValue>): void {
  if (value === null || value === undefined) return;
  if (typeof value === 'string' || typeof value === 'boolean') into[prefix] = value;
  else if (typeof value === 'number') {
    if (Number.isFinite(value)) into[prefix] = value;
  } else if (Array.isArray(value)) {
    into[prefix] = primitiveArray(value) ?? JSON.stringify(value);
  } else if (isObject(value)) {
    for (const [key, inner] of Object.entries(value)) flatten(`${prefix}.${key}`, inner, into);
  }
}

/** The log record of one trail record (already redacted, when the export redacts). */
export function otlpLogFields(record: Json): OtlpLogFields {
  const attributes: Record<string, OtlpAttributeValue> = {};
  for (const [key, value] of Object.entries(record)) {
    if (!ENVELOPE.has(key)) flatten(key, value, attributes);
  }
  if (typeof record.seq === 'number') attributes['termgate.seq'] = record.seq;
  if (typeof record.hash === 'string') attributes['termgate.hash'] = record.hash;
  if (typeof record.prev_hash === 'string') attributes['termgate.prev_hash'] = record.prev_hash;
  if (typeof record.prev_file === 'string') attributes['termgate.prev_file'] = record.prev_file;

  const event = isObject(record.event) ? record.event : {};
  const process = isObject(record.process) ? record.process : {};
  const termgate = isObject(record.termgate) ? record.termgate : {};
  const action = typeof event.action === 'string' ? event.action : 'unknown';
  const eventName = `termgate.${action}`;
  attributes['event.name'] = eventName;
  // Semantic conventions (the ECS names above stay too).
  if (Array.isArray(process.args) && process.args.every((a) => typeof a === 'string')) {
    attributes['process.command_args'] = process.args as string[];
  }
  if (typeof process.exit_code === 'number') attributes['process.exit.code'] = process.exit_code;
  const host = isObject(record.host) ? record.host : {};
  if (typeof host.hostname === 'string') attributes['host.name'] = host.hostname;
  const user = isObject(record.user) ? record.user : {};
  if (typeof user.id === 'string') attributes['user.id'] = user.id;

  const decision = typeof termgate.decision === 'string' ? termgate.decision : undefined;
  const failed = event.kind === 'alert' || event.outcome === 'failure' || decision === 'deny';
  const at = typeof record['@timestamp'] === 'string' ? Date.parse(record['@timestamp']) : Number.NaN;
  return {
    eventName,
    timestampMs: Number.isNaN(at) ? undefined : at,
    severity: failed ? 'WARN' : 'INFO',
    body: decision === undefined ? action : `${action} ${decision}`,
    attributes,
  };
}
