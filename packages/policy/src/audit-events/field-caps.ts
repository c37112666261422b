import { createHash } from 'node:crypto';

/**
 * Caps on the client-supplied fields of an audit record, in UTF-8 bytes
 * (docs/AUDIT.md, "Bounded fields"). A value over its cap is cut at a
 * character boundary, and the record's `termgate.truncated` names the field
 * with the value's full length in bytes and the sha256 of its full UTF-8
 * bytes, so the original can still be matched.
 */
export const FIELD_CAPS = Object.freeze({
  'process.command_line': 8192,
  /** Each argument; the list keeps its first `ARGS_MAX_ITEMS`. */
  'process.args': 4096,
  'process.working_directory': 4096,
  'event.reason': 2048,
  'termgate.client.name': 256,
  'termgate.client.version': 128,
  'termgate.scope': 256,
  /** The principal: a token's subject and issuer (checked by the transport, still bounded here). */
  'user.id': 1024,
  'termgate.principal.issuer': 1024,
  'termgate.terminal_id': 128,
  'termgate.cwd_requested': 4096,
  /** Each name; the list keeps its first `ENV_NAMES_MAX_ITEMS`. */
  'termgate.env_names': 256,
  /** The parsed sub-commands, as JSON: whole entries are kept while they fit. */
  'termgate.subcommands': 16384,
  /** An approval's channel, who answered it (the client's self-declared name), and why. */
  'termgate.approval.channel': 64,
  'termgate.approval.answered_by': 256,
  'termgate.approval.detail': 1024,
  'termgate.approval.answers': 128,
});

export type CappedField = keyof typeof FIELD_CAPS;

export const ARGS_MAX_ITEMS = 256;
export const ENV_NAMES_MAX_ITEMS = 256;

/** Full length and digest of a value that was cut. */
export interface TruncatedValue {
  /** Bytes of the full value (UTF-8; JSON for lists). */
  readonly length: number;
  /** Hex sha256 of those bytes. */
  readonly sha256: string;
}

/** Collects which fields of one record were cut. */
export class FieldCapper {
  readonly truncated: Record<string, TruncatedValue> = {};

  /** `value`, cut to the field's cap. */
  text(field: CappedField, value: string): string {
    const cap = FIELD_CAPS[field];
    if (value.length <= cap / 4 || Buffer.byteLength(value) <= cap) return value;
    this.note(field, Buffer.from(value, 'utf8'));
    return cutUtf8(value, cap);
  }

  /** A list of strings: each item cut to the cap, at most `maxItems` items. */
  list(field: CappedField, values: readonly string[], maxItems: number): string[] {
    const cap = FIELD_CAPS[field];
    const over =
      values.length > maxItems || values.some((v) => v.length > cap / 4 && Buffer.byteLength(v) > cap);
    if (!over) return [...values];
    this.note(field, Buffer.from(JSON.stringify(values), 'utf8'));
    return values.slice(0, maxItems).map((v) => cutUtf8(v, cap));
  }

  /** A list of JSON values: whole items while their JSON fits the cap. */
  items<T>(field: CappedField, values: readonly T[]): T[] {
    const cap = FIELD_CAPS[field];
    const json = JSON.stringify(values);
    if (Buffer.byteLength(json) <= cap) return [...values];
    this.note(field, Buffer.from(json, 'utf8'));
    const kept: T[] = [];
    let size = 2;
    for (const value of values) {
      size += Buffer.byteLength(JSON.stringify(value)) + 1;
      if (size > cap) break;
      kept.push(value);
    }
    return kept;
  }

  /** `{ truncated }` when anything was cut, else `{}`: spread into `termgate`. */
  fields(): { truncated?: Record<string, TruncatedValue> } {
    return Object.keys(this.truncated).length === 0 ? {} : { truncated: this.truncated };
  }

  private note(field: string, bytes: Buffer): void {
    this.truncated[field] = {
      length: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    };
  }
}

/** The longest prefix of `value` whose UTF-8 encoding fits `maxBytes`, never splitting a character. */
export function cutUtf8(value: string, maxBytes: number): string {
  const bytes = Buffer.from(value.slice(0, maxBytes), 'utf8');
  if (bytes.length <= maxBytes) return value.slice(0, maxBytes);
  let end = maxBytes;
  // Step back over continuation bytes (10xxxxxx) to a character start.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}
