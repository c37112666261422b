import { isAbsolute, resolve } from 'node:path';
import { durationMs } from '../duration.js';

/** The audit trail's rotation and signing settings of `serve` and `acp-proxy`. */
export interface AuditTrailOptions {
  /** Rotate the trail while running (`--audit-rotate-size`, `--audit-rotate-age`). */
  readonly auditRotation?: { readonly maxBytes?: number; readonly maxAgeMs?: number };
  /**
   * The Ed25519 private key for signed checkpoints (`--audit-signing-key`),
   * absolute; null or absent: no checkpoints. Read once at start; the file
   * must not be visible to the commands termgate runs.
   */
  readonly auditSigningKeyPath?: string | null;
  /** Checkpoint every N records and every T ms (`--audit-checkpoint-every`, `--audit-checkpoint-interval`). */
  readonly auditCheckpoint?: { readonly everyRecords?: number; readonly everyMs?: number };
}

/** The audit options that take a value. */
export const AUDIT_VALUED_OPTIONS = [
  '--audit-rotate-size',
  '--audit-rotate-age',
  '--audit-signing-key',
  '--audit-checkpoint-every',
  '--audit-checkpoint-interval',
] as const;

export const AUDIT_OPTIONS_USAGE = `  --audit-rotate-size SIZE     rotate the trail once it holds SIZE bytes (k, M, G: 1024-based)
  --audit-rotate-age DURATION  rotate the trail once its first record is DURATION old (90s, 15m, 1h, 1d)
  --audit-signing-key FILE     Ed25519 private key (termgate audit keygen): signed checkpoints
  --audit-checkpoint-every N   a checkpoint every N records (default 1000)
  --audit-checkpoint-interval DURATION
                               and every DURATION when records were written (default 60s)
`;

/**
 * Reads the options above through `get` (a missing option is undefined).
 * Throws an `Error` that names the option on a bad value.
 */
export function parseAuditTrailOptions(
  get: (name: string) => string | undefined,
  cwd: string,
): AuditTrailOptions {
  const size = get('--audit-rotate-size');
  const age = get('--audit-rotate-age');
  const key = get('--audit-signing-key');
  const every = get('--audit-checkpoint-every');
  const interval = get('--audit-checkpoint-interval');
  if (key === undefined && (every !== undefined || interval !== undefined)) {
    throw new Error('--audit-checkpoint-every and --audit-checkpoint-interval need --audit-signing-key');
  }
  const rotation = {
    ...(size === undefined ? {} : { maxBytes: parseSize('--audit-rotate-size', size) }),
    ...(age === undefined ? {} : { maxAgeMs: parseDurationMs('--audit-rotate-age', age) }),
  };
  const checkpoint = {
    ...(every === undefined ? {} : { everyRecords: parseCount('--audit-checkpoint-every', every) }),
    ...(interval === undefined ? {} : { everyMs: parseDurationMs('--audit-checkpoint-interval', interval) }),
  };
  return {
    ...(size === undefined && age === undefined ? {} : { auditRotation: rotation }),
    ...(key === undefined ? {} : { auditSigningKeyPath: isAbsolute(key) ? key : resolve(cwd, key) }),
    ...(every === undefined && interval === undefined ? {} : { auditCheckpoint: checkpoint }),
  };
}

const SIZE_UNITS: Readonly<Record<string, number>> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

export function parseSize(name: string, text: string): number {
  const match = /^(\d+)([kmg]?)(?:i?b)?$/i.exec(text.trim());
  const value = match === null ? Number.NaN : Number(match[1]) * SIZE_UNITS[match[2]!.toLowerCase()]!;
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new Error(`${name} must be a positive size like 100M, 512k or 1048576, got "${text}"`);
  }
  return value;
}

export function parseDurationMs(name: string, text: string): number {
  const ms = durationMs(text);
  if (ms === null) throw new Error(`${name} must be a duration like 90s, 15m, 1h or 1d, got "${text}"`);
  if (!Number.isSafeInteger(ms) || ms <= 0) throw new Error(`${name} must be positive, got "${text}"`);
  return ms;
}

function parseCount(name: string, text: string): number {
  const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value <= 0)
    throw new Error(`${name} must be a positive integer, got "${text}"`);
  return value;
}
