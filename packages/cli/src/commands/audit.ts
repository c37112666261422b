import { parseArgs } from 'node:util';
import {
  type AuditQuery,
  auditField,
  matchesAuditQuery,
  readAuditRecords,
  type VerifyResult,
  verifyAuditFile,
} from '@termgate/policy';
import type { CliCommand, CliIo } from './cli-io.js';

export const AUDIT_USAGE = `Usage:
  termgate audit verify FILE [--anchor SEQ:HASH]... [--json]
      Check the hash chain: no edits, gaps, reordering or truncation.
      --anchor  a record's seq and hash noted elsewhere earlier (serve logs the
                trail's head to stderr at start and stop): that record must still
                be there with that hash. This catches what the chain alone cannot:
                a rewrite with recomputed hashes, or records cut from the end.
      Exit 0 intact, 1 broken (naming the first bad seq), 2 usage or I/O error.
  termgate audit show FILE [--since ISO|DURATION] [--decision allow|deny]
                           [--terminal ID] [--grep REGEX] [--json]
      Print records as a table (or JSON Lines with --json). Filters are ANDed.
      --since     an ISO time, or a duration back from now: 90s, 15m, 1h, 2d, 1h30m
      --terminal  a terminal id or its first characters
      --grep      a JavaScript regular expression tested against the command line
`;

class UsageError extends Error {}

/**
 * `termgate audit …` (argv starts after `audit`). Writes results to stdout and
 * problems to stderr; resolves with the exit code and never throws.
 */
export const auditCommand: CliCommand = async (argv, io) => {
  const [subcommand, ...rest] = argv;
  try {
    switch (subcommand) {
      case 'verify':
        return verify(rest, io);
      case 'show':
        return show(rest, io);
      case 'help':
      case '--help':
      case '-h':
        io.stdout.write(AUDIT_USAGE);
        return 0;
      default:
        throw new UsageError(
          subcommand === undefined ? 'missing subcommand' : `unknown subcommand "${subcommand}"`,
        );
    }
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`termgate audit: ${error.message}\n\n${AUDIT_USAGE}`);
    } else {
      io.stderr.write(`termgate audit: ${error instanceof Error ? error.message : String(error)}\n`);
    }
    return 2;
  }
};

function parse<T extends NonNullable<Parameters<typeof parseArgs>[0]>['options']>(
  argv: readonly string[],
  options: T,
) {
  let parsed: ReturnType<
    typeof parseArgs<{ args: string[]; options: T; allowPositionals: true; strict: true }>
  >;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (parsed.positionals.length !== 1) throw new UsageError('expected exactly one FILE');
  return { file: parsed.positionals[0]!, values: parsed.values };
}

function verify(argv: readonly string[], io: CliIo): number {
  const { file, values } = parse(argv, {
    json: { type: 'boolean' },
    anchor: { type: 'string', multiple: true },
  });
  const anchors = (values.anchor ?? []).map(parseAnchor);
  let result: VerifyResult = verifyAuditFile(file);
  if (result.ok) result = checkAnchors(file, result, anchors);
  if (values.json) {
    io.stdout.write(`${JSON.stringify({ file, ...result })}\n`);
  } else {
    io.stdout.write(`${describeVerdict(file, result)}\n`);
  }
  return result.ok ? 0 : 1;
}

interface Anchor {
  readonly seq: number;
  readonly hash: string;
}

function parseAnchor(text: string): Anchor {
  const match = /^(\d+):([0-9a-f]{64})$/.exec(text);
  if (!match)
    throw new UsageError(`--anchor must be SEQ:HASH (a seq and a 64-hex-digit hash), got "${text}"`);
  return { seq: Number(match[1]), hash: match[2]! };
}

/** An intact chain must also still hold every anchored record, unchanged. */
function checkAnchors(
  file: string,
  result: VerifyResult & { ok: true },
  anchors: readonly Anchor[],
): VerifyResult {
  if (anchors.length === 0) return result;
  const wanted = new Map(anchors.map((anchor) => [anchor.seq, anchor.hash]));
  const found = new Map<number, { hash: string; line: number }>();
  for (const entry of readAuditRecords(file)) {
    if (!('record' in entry)) continue;
    const { seq, hash } = entry.record as { seq?: unknown; hash?: unknown };
    if (typeof seq === 'number' && typeof hash === 'string' && wanted.has(seq)) {
      found.set(seq, { hash, line: entry.line });
    }
  }
  for (const anchor of [...anchors].sort((a, b) => a.seq - b.seq)) {
    const record = found.get(anchor.seq);
    if (record?.hash === anchor.hash) continue;
    const problem =
      record === undefined
        ? `anchored record seq ${anchor.seq} is missing: records were removed from the end of the file`
        : `anchored record seq ${anchor.seq} has hash ${record.hash}, not ${anchor.hash}: the chain was rewritten`;
    // line 0: the file has no such record.
    return { ok: false, seq: anchor.seq, line: record?.line ?? 0, problem, records: result.records };
  }
  return result;
}

function describeVerdict(file: string, result: VerifyResult): string {
  if (result.ok && result.head === null) return `${file}: empty, nothing to verify`;
  if (result.ok) {
    return `${file}: intact, ${result.records} records (seq 1..${result.head?.seq}), head hash ${result.head?.hash}`;
  }
  if (result.line === 0) return `${file}: BROKEN at seq ${result.seq}: ${result.problem}`;
  const intact =
    result.records === 0 ? 'no record before it is intact' : `seq 1..${result.seq - 1} are intact`;
  return `${file}: BROKEN at seq ${result.seq} (line ${result.line}): ${result.problem}; ${intact}`;
}

function show(argv: readonly string[], io: CliIo): number {
  const { file, values } = parse(argv, {
    since: { type: 'string' },
    decision: { type: 'string' },
    terminal: { type: 'string' },
    grep: { type: 'string' },
    json: { type: 'boolean' },
  });
  const query = buildQuery(values, new Date());
  const rows: string[][] = [];
  for (const entry of readAuditRecords(file)) {
    if (!('record' in entry)) {
      io.stderr.write(`termgate audit: ${file}:${entry.line}: ${entry.problem}, skipped\n`);
      continue;
    }
    if (!matchesAuditQuery(entry.record, query)) continue;
    if (values.json) io.stdout.write(`${JSON.stringify(entry.record)}\n`);
    else rows.push(tableRow(entry.record));
  }
  if (!values.json) {
    if (rows.length === 0) io.stderr.write('termgate audit: no matching records\n');
    else io.stdout.write(alignTable([HEADER, ...rows]));
  }
  return 0;
}

function buildQuery(
  values: { since?: string; decision?: string; terminal?: string; grep?: string },
  now: Date,
): AuditQuery {
  const query: { -readonly [K in keyof AuditQuery]: AuditQuery[K] } = {};
  if (values.since !== undefined) query.since = parseSince(values.since, now);
  if (values.decision !== undefined) {
    if (values.decision !== 'allow' && values.decision !== 'deny') {
      throw new UsageError('--decision must be allow or deny');
    }
    query.decision = values.decision;
  }
  if (values.terminal !== undefined) query.terminal = values.terminal;
  if (values.grep !== undefined) {
    try {
      query.grep = new RegExp(values.grep);
    } catch (error) {
      throw new UsageError(`--grep: ${(error as Error).message}`);
    }
  }
  return query;
}

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(?:\d+(?:ms|s|m|h|d))+$/;
const DURATION_PART = /(\d+)(ms|s|m|h|d)/g;

/** `1h30m` back from `now`, or an ISO date-time. */
export function parseSince(value: string, now: Date): Date {
  if (DURATION.test(value)) {
    let ms = 0;
    for (const [, amount, unit] of value.matchAll(DURATION_PART)) ms += Number(amount) * UNIT_MS[unit!]!;
    return new Date(now.getTime() - ms);
  }
  const at = /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(at))
    throw new UsageError(`--since: "${value}" is neither an ISO time nor a duration like 1h`);
  return new Date(at);
}

const HEADER = ['TIME', 'SEQ', 'ACTION', 'DECISION', 'TERMINAL', 'COMMAND', 'RULES', 'EXIT'];
const COMMAND_WIDTH = 60;

function tableRow(record: Readonly<Record<string, unknown>>): string[] {
  const text = (path: string): string => {
    const value = auditField(record, path);
    return value === undefined || value === null ? '-' : String(value);
  };
  const timestamp = auditField(record, '@timestamp');
  const ruleIds = auditField(record, 'rule.id');
  const exitCode = auditField(record, 'process.exit_code');
  const signal = auditField(record, 'termgate.signal');
  return [
    typeof timestamp === 'string' ? timestamp.replace(/\.\d+Z$/, 'Z') : '-',
    text('seq'),
    text('event.action'),
    text('termgate.decision'),
    text('termgate.terminal_id').slice(0, 8),
    clip(printable(text('process.command_line')), COMMAND_WIDTH),
    Array.isArray(ruleIds) && ruleIds.length > 0 ? printable(ruleIds.join(',')) : '-',
    typeof exitCode === 'number' ? String(exitCode) : typeof signal === 'string' ? signal : '-',
  ];
}

function alignTable(rows: readonly string[][]): string {
  const widths = HEADER.map((_, column) => Math.max(...rows.map((row) => [...row[column]!].length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!)))
        .join('  ')
        .trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join('');
}

/**
 * Escapes what a terminal would interpret: C0/C1 controls (newlines, ESC
 * sequences) and bidi overrides, so a recorded command cannot hide or
 * rewrite the rows shown to a reviewer.
 */
export function printable(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, (char) => {
    const named: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
    return named[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}

function clip(text: string, width: number): string {
  const chars = [...text];
  return chars.length <= width ? text : `${chars.slice(0, width - 1).join('')}…`;
}
