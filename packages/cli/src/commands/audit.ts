import { statSync } from 'node:fs';
import {
  type ApprovalFields,
  type AuditQuery,
  AuditSummarizer,
  groupOf,
  listTrailDirectory,
  matchesAuditQuery,
  readAuditRecords,
  readRecordGroups,
} from '@termgate/audit';
import { durationMs } from '../duration.js';
import { parseAuditArgs } from './audit-args.js';
import { keygenCommand } from './audit-keygen.js';
import { reportCommand } from './audit-report.js';
import { askRoundTrips } from './audit-round-trips.js';
import { formatSummary } from './audit-summary-format.js';
import { verifyCommand } from './audit-verify.js';
import type { CliCommand, CliIo } from './cli-io.js';
import { printUsage, reportUsageError, UsageError, wantsHelp } from './usage.js';

const AUDIT_SUBCOMMANDS: readonly string[] = ['verify', 'keygen', 'report', 'show', 'export'];

/**
 * The decisions `--decision` accepts. `ask` finds the creates that asked a
 * person; their `terminal-answer` records carry allow or deny (with
 * `termgate.approval.outcome` telling a person's "no" from a rule's).
 */
export const AUDIT_DECISIONS: readonly NonNullable<AuditQuery['decision']>[] = ['allow', 'deny', 'ask'];

export const AUDIT_USAGE = `Usage:
  termgate audit verify FILE|DIR... [--anchor SEQ:HASH]... [--public-key FILE]... [--json]
      Check the hash chain: no edits, gaps, reordering or truncation. Several
      files (oldest first) or a directory (a rotated trail's segments, oldest
      first) are checked as one chain; a missing, reordered or cut file is named.
      --anchor      a record's seq and hash noted elsewhere earlier (serve logs the
                    trail's head to stderr at start and stop): that record must still
                    be there with that hash.
      --public-key  a checkpoint public key (termgate audit keygen): every signed
                    checkpoint must verify with a given key, and the trail must end
                    with the final checkpoint a server writes when it stops.
      Exit 0 intact (with --public-key: and ending with a final checkpoint),
      1 broken (naming the file and the first bad seq), 2 usage or I/O error,
      3 open or cut: intact, but not ending with a final checkpoint, and no
      server writing it runs on this host (--public-key), 4 open: a server on
      this host still writes it (its pid and start time; --public-key).
  termgate audit keygen FILE
      Write an Ed25519 key pair for signed checkpoints: FILE (private, mode 0600)
      and FILE.pub (public). Never overwrites.
  termgate audit report FILE|DIR... --html OUT [--public-key FILE]...
                        [--redact-command keep|hash|cut:N] [--redact-args]
                        [--principal SUBJECT] [--principal-issuer ISSUER]
      Verify the trail and write a review report: one self-contained HTML file
      (no network, no external assets) with the verification result on top, a
      timeline of terminals, refusals highlighted, filters by decision, rule,
      client and text, and each terminal's details. With --principal (and
      --principal-issuer), only that principal's terminals; the verification
      still covers the whole trail. Exit codes as verify.
      --redact-command  hash: each command line as sha256:HEX; cut:N: its first N
                        characters; both drop the argument values too
      --redact-args     argument values dropped (program names stay)
  termgate audit export FILE|DIR --otlp URL [--cursor FILE] [--follow] [--interval DURATION]
                        [--redact-command keep|hash|cut:N] [--redact-args] [--header NAME=VALUE]...
      Send the trail's records after the cursor to an OTLP/HTTP logs endpoint
      (protobuf; URL like http://collector:4318/v1/logs, default
      OTEL_EXPORTER_OTLP_LOGS_ENDPOINT), one log per record carrying its seq and
      hash, and move the cursor as the collector accepts them (at-least-once).
      --cursor    where the export stands (default: audit.otlp-cursor beside FILE,
                  DIR/otlp-cursor for a directory), mode 0600
      --follow    keep exporting new records, every --interval (1s); a failing
                  collector is retried; SIGTERM or SIGINT stop it (exit 0)
      Exit 0 exported, 1 the collector failed or the trail does not chain on from
      the cursor, 2 usage or I/O error.
  termgate audit show FILE|DIR... [--since ISO|DURATION] [--decision ${AUDIT_DECISIONS.join('|')}]
                           [--terminal ID] [--client NAME] [--principal SUBJECT]
                           [--principal-issuer ISSUER] [--grep REGEX] [--json | --summary]
      Print records as a table (or JSON Lines with --json). Filters are ANDed.
      --since     an ISO time, or a duration back from now: 90s, 15m, 1h, 2d, 1h30m
      --terminal  a terminal id or its first characters
      --client    the client's name, as recorded (termgate.client.name)
      --principal the authenticated principal's subject (user.id, a token's sub)
      --principal-issuer  its issuer (termgate.principal.issuer, a token's iss)
      --grep      a JavaScript regular expression tested against the command line
      --summary   counts of the matching commands by decision, rule and program
      With --decision ask or --summary, a 2026-07-28 approval round trip (the call
      that asked, then the retry that carried the answer) counts once, as the retry.
  termgate audit [SUBCOMMAND] -h|--help
      Print this help.
`;

/**
 * `termgate audit …` (argv starts after `audit`). Writes results to stdout and
 * problems to stderr; resolves with the exit code and never throws.
 */
export const auditCommand: CliCommand = async (argv, io) => {
  const [subcommand, ...rest] = argv;
  if (subcommand !== undefined && AUDIT_SUBCOMMANDS.includes(subcommand) && wantsHelp(rest)) {
    return printUsage(io, AUDIT_USAGE);
  }
  try {
    switch (subcommand) {
      case 'verify':
        return verifyCommand(rest, io);
      case 'keygen':
        return keygenCommand(rest, io);
      case 'report':
        return reportCommand(rest, io, trailFiles);
      case 'show':
        return show(rest, io);
      case 'export':
        // The OpenTelemetry SDK loads for this command only.
        return await (await import('./audit-export.js')).exportCommand(rest, io);
      case 'help':
      case '--help':
      case '-h':
        return printUsage(io, AUDIT_USAGE);
      default:
        throw new UsageError(
          subcommand === undefined
            ? `missing subcommand: ${AUDIT_SUBCOMMANDS.join(', ')}`
            : `unknown subcommand "${subcommand}"`,
        );
    }
  } catch (error) {
    if (error instanceof UsageError) {
      const known = subcommand !== undefined && AUDIT_SUBCOMMANDS.includes(subcommand);
      return reportUsageError(io, known ? `audit ${subcommand}` : 'audit', error.message);
    }
    // An I/O error (a missing file, an unreadable key): exit 2, as the usage says.
    io.stderr.write(`termgate audit: ${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
};

/** The files named on the command line, a directory standing for its trail's files, oldest first. */
export function trailFiles(args: readonly string[]): string[] {
  return args.flatMap((arg) => (statSync(arg).isDirectory() ? listTrailDirectory(arg) : [arg]));
}

function show(argv: readonly string[], io: CliIo): number {
  const { files: args, values } = parseAuditArgs(
    argv,
    {
      since: { type: 'string' },
      decision: { type: 'string' },
      terminal: { type: 'string' },
      client: { type: 'string' },
      principal: { type: 'string' },
      'principal-issuer': { type: 'string' },
      grep: { type: 'string' },
      json: { type: 'boolean' },
      summary: { type: 'boolean' },
    },
    1,
    Number.POSITIVE_INFINITY,
  );
  if (values.json && values.summary) throw new UsageError('--json and --summary exclude each other');
  const query = buildQuery(values, new Date());
  const rows: string[][] = [];
  const summary = new AuditSummarizer();
  const files = trailFiles(args);
  // Counting asks (`--decision ask`, `--summary`): a 2026-07-28 round trip is one command, not two.
  const roundTrips = values.summary || query.decision === 'ask' ? askRoundTrips(files) : null;
  for (const file of files) {
    for (const entry of readAuditRecords(file)) {
      if (!('record' in entry)) {
        io.stderr.write(`termgate audit: ${file}:${entry.line}: ${entry.problem}, skipped\n`);
        continue;
      }
      if (!matchesAuditQuery(entry.record, query)) continue;
      if (roundTrips?.superseded(entry.record)) continue;
      if (values.summary) summary.add(entry.record);
      else if (values.json) io.stdout.write(`${JSON.stringify(entry.record)}\n`);
      else rows.push(tableRow(entry.record));
    }
  }
  if (values.summary) {
    io.stdout.write(formatSummary(summary.result(), printable));
  } else if (!values.json) {
    if (rows.length === 0) io.stderr.write('termgate audit: no matching records\n');
    else io.stdout.write(alignTable([HEADER, ...rows]));
  }
  return 0;
}

function buildQuery(
  values: {
    since?: string;
    decision?: string;
    terminal?: string;
    client?: string;
    principal?: string;
    'principal-issuer'?: string;
    grep?: string;
  },
  now: Date,
): AuditQuery {
  const query: { -readonly [K in keyof AuditQuery]: AuditQuery[K] } = {};
  if (values.since !== undefined) query.since = parseSince(values.since, now);
  if (values.decision !== undefined) {
    const decision = AUDIT_DECISIONS.find((d) => d === values.decision);
    if (decision === undefined) throw new UsageError(`--decision must be ${AUDIT_DECISIONS.join(' or ')}`);
    query.decision = decision;
  }
  if (values.terminal !== undefined) query.terminal = values.terminal;
  if (values.client !== undefined) query.client = values.client;
  if (values.principal !== undefined) query.principal = values.principal;
  if (values['principal-issuer'] !== undefined) query.principalIssuer = values['principal-issuer'];
  if (values.grep !== undefined) {
    try {
      query.grep = new RegExp(values.grep);
    } catch (error) {
      throw new UsageError(`--grep: ${(error as Error).message}`);
    }
  }
  return query;
}

/** A duration (`1h30m`, see duration.ts) back from `now`, or an ISO date-time. */
export function parseSince(value: string, now: Date): Date {
  const ago = durationMs(value);
  if (ago !== null) return new Date(now.getTime() - ago);
  const at = /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(at))
    throw new UsageError(`--since: "${value}" is neither an ISO time nor a duration like 1h`);
  return new Date(at);
}

const HEADER = ['TIME', 'SEQ', 'ACTION', 'DECISION', 'TERMINAL', 'COMMAND', 'RULES', 'EXIT', 'REASON'];
const COMMAND_WIDTH = 60;
const REASON_WIDTH = 80;
/** The TERMINAL cell of a refused create: its id was never a terminal. */
export const REFUSED_TERMINAL = '(refused)';

function tableRow(record: Readonly<Record<string, unknown>>): string[] {
  const text = (value: unknown): string => (value === undefined || value === null ? '-' : String(value));
  const { event, process: command, rule, termgate } = readRecordGroups(record);
  const timestamp = record['@timestamp'];
  const ruleIds = rule.id;
  const exitCode = command.exit_code;
  const signal = termgate.signal;
  // An approval's answer says how the question ended: `deny (deny)` (a person said no) reads apart from a rule's deny.
  const outcome = groupOf<ApprovalFields>(termgate.approval).outcome;
  const decision =
    typeof outcome === 'string' ? `${text(termgate.decision)} (${outcome})` : text(termgate.decision);
  const refusedCreate = event.action === 'terminal-create' && termgate.decision === 'deny';
  return [
    typeof timestamp === 'string' ? timestamp.replace(/\.\d+Z$/, 'Z') : '-',
    text(record.seq),
    text(event.action),
    printable(decision),
    refusedCreate ? REFUSED_TERMINAL : printable(text(termgate.terminal_id).slice(0, 8)),
    clip(printable(text(command.command_line)), COMMAND_WIDTH),
    Array.isArray(ruleIds) && ruleIds.length > 0 ? printable(ruleIds.join(',')) : '-',
    typeof exitCode === 'number' ? String(exitCode) : typeof signal === 'string' ? signal : '-',
    clip(printable(text(event.reason)), REASON_WIDTH),
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
