import { statSync } from 'node:fs';
import {
  listTrailDirectory,
  loadPublicKeys,
  readAuditRecords,
  type TrailVerifyResult,
  verifyAuditTrail,
} from '@termgate/audit';
import { parseAuditArgs } from './audit-args.js';
import type { CliIo } from './cli-io.js';
import { UsageError } from './usage.js';

/** Exit code of `audit verify` when the chain is intact and every checkpoint valid, but records after the last one are unsigned. */
export const EXIT_UNSIGNED_TAIL = 3;

/**
 * `termgate audit verify FILE|DIR… [--anchor SEQ:HASH]… [--public-key FILE]… [--json]`.
 * Files are one trail, oldest first; a directory stands for its rotated files
 * and its active file (`listTrailDirectory`). Exit 0 intact (and, with
 * `--public-key`, signed to its end), 1 broken, 3 intact with unsigned
 * records after the last checkpoint; usage and I/O errors throw.
 */
export function verifyCommand(argv: readonly string[], io: CliIo): number {
  const { files: args, values } = parseAuditArgs(
    argv,
    {
      json: { type: 'boolean' },
      anchor: { type: 'string', multiple: true },
      'public-key': { type: 'string', multiple: true },
    },
    1,
    Number.POSITIVE_INFINITY,
  );
  const anchors = (values.anchor ?? []).map(parseAnchor);
  const files = args.flatMap((arg) => (statSync(arg).isDirectory() ? listTrailDirectory(arg) : [arg]));
  const keyPaths = values['public-key'] ?? [];
  const publicKeys = keyPaths.length === 0 ? undefined : loadPublicKeys(keyPaths);
  let result = verifyAuditTrail(files, publicKeys === undefined ? {} : { publicKeys });
  if (result.ok) result = checkAnchors(files, result, anchors);
  const label = args.length === 1 ? args[0]! : `${files.length} files`;
  if (values.json) {
    const { problem, ...rest } = result;
    io.stdout.write(
      `${JSON.stringify({
        file: problem?.file ?? label,
        ...rest,
        ...(problem === undefined ? {} : { seq: problem.seq, line: problem.line, problem: problem.message }),
      })}\n`,
    );
  } else {
    io.stdout.write(`${describeVerdict(label, result)}\n`);
  }
  if (!result.ok) return 1;
  return publicKeys !== undefined && result.checkpoints.unsigned > 0 ? EXIT_UNSIGNED_TAIL : 0;
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
  files: readonly string[],
  result: TrailVerifyResult,
  anchors: readonly Anchor[],
): TrailVerifyResult {
  if (anchors.length === 0) return result;
  const wanted = new Map(anchors.map((anchor) => [anchor.seq, anchor.hash]));
  const found = new Map<number, { hash: string; line: number; file: string }>();
  for (const file of files) {
    for (const entry of readAuditRecords(file)) {
      if (!('record' in entry)) continue;
      const { seq, hash } = entry.record as { seq?: unknown; hash?: unknown };
      if (typeof seq === 'number' && typeof hash === 'string' && wanted.has(seq)) {
        found.set(seq, { hash, line: entry.line, file });
      }
    }
  }
  for (const anchor of [...anchors].sort((a, b) => a.seq - b.seq)) {
    const record = found.get(anchor.seq);
    if (record?.hash === anchor.hash) continue;
    const message =
      record === undefined
        ? `anchored record seq ${anchor.seq} is missing: records were removed from the end of the trail`
        : `anchored record seq ${anchor.seq} has hash ${record.hash}, not ${anchor.hash}: the chain was rewritten`;
    // line 0: the trail has no such record.
    return {
      ...result,
      ok: false,
      problem: {
        file: record?.file ?? files[files.length - 1]!,
        seq: anchor.seq,
        line: record?.line ?? 0,
        message,
      },
    };
  }
  return result;
}

export function describeVerdict(label: string, result: TrailVerifyResult): string {
  const { problem } = result;
  if (problem !== undefined) {
    const file = problem.file;
    if (problem.line === 0) return `${file}: BROKEN at seq ${problem.seq}: ${problem.message}`;
    const intact =
      problem.seq <= 1 ? 'no record before it is intact' : `seq 1..${problem.seq - 1} are intact`;
    return `${file}: BROKEN at seq ${problem.seq} (line ${problem.line}): ${problem.message}; ${intact}`;
  }
  if (result.head === null) return `${label}: empty, nothing to verify`;
  const inFiles = result.files.length > 1 ? ` in ${result.files.length} files` : '';
  const base = `${label}: intact, ${result.records} records${inFiles} (seq 1..${result.head.seq}), head hash ${result.head.hash}`;
  const { checkpoints } = result;
  if (!checkpoints.checked) return base;
  const signed =
    checkpoints.signedThrough === null
      ? 'no signed checkpoint'
      : `signed through seq ${checkpoints.signedThrough} (${checkpoints.count} checkpoints)`;
  if (checkpoints.unsigned === 0) return `${base}; ${signed}`;
  return `${base}; ${signed}; UNSIGNED: ${checkpoints.unsigned} records after the last checkpoint (written since it, or the tail was cut or rewritten)`;
}
