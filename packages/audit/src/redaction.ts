import { sha256Hex } from './chain.js';

/**
 * What leaves the machine of a record's command text, for `audit export`
 * and `audit report` (docs/AUDIT.md, "Redaction"). The trail itself is never
 * redacted: it is the record of truth, and its hash chain covers its bytes.
 *
 * - `command`: `process.command_line` kept, replaced by `sha256:<hex>` of
 *   the full line (equal commands stay comparable), or cut to its first
 *   `chars` characters (code points) followed by `…`.
 * - `args`: argument values dropped: `process.args` keeps its first element
 *   (the program), each parsed sub-command in `termgate.subcommands` keeps
 *   `program` and `via` only (its `argv`, redirections and other members
 *   go). Hashing or cutting the command implies it: the arguments are the
 *   same text. Program names stay, so a redacted export still says which
 *   programs ran.
 *
 * - `event.reason`: the policy's reasons quote the command's words in
 *   backticks (`` `rm -rf /` matched deny rule no-rm ``); under any
 *   redaction each backticked span becomes `` `[redacted]` ``.
 *
 * Client-set environment variables reach the trail by name only
 * (`termgate.env_names`); their values are never written, so there is no
 * value to redact.
 */
export type CommandRedaction =
  | { readonly kind: 'keep' }
  | { readonly kind: 'hash' }
  | { readonly kind: 'cut'; readonly chars: number };

export interface Redaction {
  readonly command: CommandRedaction;
  readonly dropArgs: boolean;
}

export const NO_REDACTION: Redaction = { command: { kind: 'keep' }, dropArgs: false };

/**
 * Parses a `--redact-command` value: `keep`, `hash` or `cut:N` (N ≥ 0,
 * an integer). Throws an `Error` saying what is accepted otherwise.
 */
export function parseCommandRedaction(text: string): CommandRedaction {
  if (text === 'keep') return { kind: 'keep' };
  if (text === 'hash') return { kind: 'hash' };
  const cut = /^cut:(\d{1,6})$/.exec(text);
  if (cut !== null) return { kind: 'cut', chars: Number(cut[1]) };
  throw new Error(`--redact-command must be keep, hash or cut:N (N characters), not ${JSON.stringify(text)}`);
}

/** True when `redaction` changes nothing. */
export function isNoRedaction(redaction: Redaction): boolean {
  return redaction.command.kind === 'keep' && !redaction.dropArgs;
}

type Json = Readonly<Record<string, unknown>>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function redactLine(line: string, command: CommandRedaction): string {
  switch (command.kind) {
    case 'keep':
      return line;
    case 'hash':
      return `sha256:${sha256Hex(line)}`;
    case 'cut': {
      const points = [...line];
      return points.length <= command.chars ? line : `${points.slice(0, command.chars).join('')}…`;
    }
  }
}

const QUOTED = /`[^`]*`/g;

function keepProgramOnly(subcommand: unknown): unknown {
  if (!isObject(subcommand)) return subcommand;
  const kept: Record<string, unknown> = {};
  if (subcommand.program !== undefined) kept.program = subcommand.program;
  if (subcommand.via !== undefined) kept.via = subcommand.via;
  return kept;
}

/**
 * A copy of `record` (as read back from the trail) with `redaction`
 * applied; `record` itself is not changed. A field that is missing stays
 * missing; one of an unexpected type is dropped when it would carry
 * command text (fail closed), never passed through.
 */
export function redactRecord(record: Json, redaction: Redaction): Json {
  if (isNoRedaction(redaction)) return record;
  const dropArgs = redaction.dropArgs || redaction.command.kind !== 'keep';
  const out: Record<string, unknown> = { ...record };
  if (isObject(record.process)) {
    const process: Record<string, unknown> = { ...record.process };
    if (process.command_line !== undefined) {
      if (typeof process.command_line === 'string') {
        process.command_line = redactLine(process.command_line, redaction.command);
      } else if (redaction.command.kind !== 'keep') delete process.command_line;
    }
    if (dropArgs && process.args !== undefined) {
      const [first] = Array.isArray(process.args) ? (process.args as unknown[]) : [];
      if (typeof first === 'string') {
        process.args = [first];
      } else delete process.args;
    }
    out.process = process;
  }
  if (isObject(record.event) && record.event.reason !== undefined) {
    const event: Record<string, unknown> = { ...record.event };
    if (typeof event.reason === 'string') event.reason = event.reason.replace(QUOTED, '`[redacted]`');
    else delete event.reason;
    out.event = event;
  }
  if (dropArgs && isObject(record.termgate)) {
    const termgate: Record<string, unknown> = { ...record.termgate };
    if (termgate.subcommands !== undefined) {
      if (Array.isArray(termgate.subcommands)) {
        termgate.subcommands = (termgate.subcommands as unknown[]).map(keepProgramOnly);
      } else delete termgate.subcommands;
    }
    out.termgate = termgate;
  }
  return out;
}
