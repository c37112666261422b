import { writeFileSync } from 'node:fs';
import {
  type AuditQuery,
  loadPublicKeys,
  matchesAuditQuery,
  ReportModelBuilder,
  type ReportVerification,
  readAuditRecords,
  redactRecord,
  renderReportHtml,
  verifyAuditTrail,
} from '@termgate/audit';
import { parseAuditArgs } from './audit-args.js';
import { REDACTION_OPTIONS, redactionFrom } from './audit-redaction.js';
import { askRoundTrips } from './audit-round-trips.js';
import { describeVerdict, verdictOf } from './audit-verify.js';
import type { CliIo } from './cli-io.js';
import { UsageError } from './usage.js';

/**
 * `termgate audit report FILE|DIR... --html OUT [--public-key FILE]...
 * [--redact-command keep|hash|cut:N] [--redact-args] [--principal SUBJECT]
 * [--principal-issuer ISSUER]`:
 * verifies the trail, then writes one self-contained HTML review report
 * (mode 0600: it holds the same commands as the trail). The report is
 * written whatever the verification found, which it shows on top. Redaction
 * (`redaction.ts` of @termgate/audit) applies to what the report shows; the
 * verification reads the trail as written. Exit as
 * `audit verify`: 0 intact, 1 broken, 3 open or cut, 4 open; 2 usage or I/O error.
 */
export function reportCommand(
  argv: readonly string[],
  io: CliIo,
  trailFiles: (args: readonly string[]) => string[],
): number {
  const { files: args, values } = parseAuditArgs(
    argv,
    {
      html: { type: 'string' },
      'public-key': { type: 'string', multiple: true },
      principal: { type: 'string' },
      'principal-issuer': { type: 'string' },
      ...REDACTION_OPTIONS,
    },
    1,
    Number.POSITIVE_INFINITY,
  );
  const out = values.html;
  if (out === undefined || out === '') throw new UsageError('report needs --html OUT');
  const redaction = redactionFrom(values);
  const files = trailFiles(args);
  const keyPaths = values['public-key'] ?? [];
  const publicKeys = keyPaths.length === 0 ? undefined : loadPublicKeys(keyPaths);
  const result = verifyAuditTrail(files, publicKeys === undefined ? {} : { publicKeys });
  const verdict = verdictOf(result, publicKeys !== undefined);
  const label = args.length === 1 ? args[0]! : `${files.length} files`;
  const verification: ReportVerification = {
    // Open or cut: shown as the report's "unsigned" (not proven complete).
    status: verdict.status === 'open' || verdict.status === 'open-or-cut' ? 'unsigned' : verdict.status,
    text: describeVerdict(label, result, verdict),
  };
  // The report covers the whole trail's verification, and only the chosen principal's terminals.
  const query: AuditQuery = {
    ...(values.principal !== undefined && { principal: values.principal }),
    ...(values['principal-issuer'] !== undefined && { principalIssuer: values['principal-issuer'] }),
  };
  const builder = new ReportModelBuilder();
  const roundTrips = askRoundTrips(files);
  for (const file of files) {
    for (const entry of readAuditRecords(file)) {
      if ('record' in entry) {
        // A 2026-07-28 approval round trip is one terminal: the retry's, which ran (or was refused).
        if (matchesAuditQuery(entry.record, query) && !roundTrips.superseded(entry.record))
          builder.add(redactRecord(entry.record, redaction));
      } else io.stderr.write(`termgate audit: ${file}:${entry.line}: ${entry.problem}, skipped\n`);
    }
  }
  const model = builder.result(result.ok ? undefined : result.problem?.seq);
  writeFileSync(out, renderReportHtml({ files, generatedAt: new Date(), verification, model }), {
    mode: 0o600,
  });
  io.stdout.write(
    `${out}: ${model.terminals.length} terminals, ${model.records} records; ${verification.text}\n`,
  );
  return verdict.exitCode;
}
