import { statSync } from 'node:fs';
import {
  isWriterRunning,
  listTrailDirectory,
  loadPublicKeys,
  readAuditRecords,
  type TrailVerifyResult,
  type TrailWriter,
  verifyAuditTrail,
} from '@termgate/audit';
import { parseAuditArgs } from './audit-args.js';
import type { CliIo } from './cli-io.js';
import { UsageError } from './usage.js';

/**
 * Exit code of `audit verify --public-key` when the chain is intact and every
 * checkpoint valid, but the trail does not end with a final checkpoint and
 * no server writing it runs here: open or cut (the tail may be missing).
 */
export const EXIT_UNSIGNED_TAIL = 3;
/** Exit code of `audit verify --public-key` for an intact trail a server on this host still writes: not final yet. */
export const EXIT_OPEN = 4;

/** What a verification means: `open` and `open-or-cut` only with checked checkpoints. */
export interface TrailVerdict {
  readonly status: 'intact' | 'broken' | 'open' | 'open-or-cut';
  readonly exitCode: number;
  /** Writers of the trail that still run on this host (see `isWriterRunning`). */
  readonly running: readonly TrailWriter[];
}

/**
 * With checked checkpoints, a trail is intact only when it ends with a
 * final checkpoint (its server stopped). Otherwise it is `open` when a
 * server that started writing it and has not stopped still runs on this
 * host (its pid, host name and start time; evidence only, so never exit 0),
 * else `open-or-cut`: nothing here can tell a cut tail from a killed server
 * or one on another host. Without keys the end cannot be checked at all.
 */
export function verdictOf(result: TrailVerifyResult, checked: boolean): TrailVerdict {
  if (!result.ok) return { status: 'broken', exitCode: 1, running: [] };
  if (!checked || result.head === null || result.checkpoints.final) {
    return { status: 'intact', exitCode: 0, running: [] };
  }
  const running = result.writers.filter((writer) => isWriterRunning(writer));
  return running.length > 0
    ? { status: 'open', exitCode: EXIT_OPEN, running }
    : { status: 'open-or-cut', exitCode: EXIT_UNSIGNED_TAIL, running };
}

/**
 * `termgate audit verify FILE|DIR… [--anchor SEQ:HASH]… [--public-key FILE]… [--json]`.
 * Files are one trail, oldest first; a directory stands for its rotated files
 * and its active file (`listTrailDirectory`). Exit 0 intact (and, with
 * `--public-key`, signed to its end, a final checkpoint), 1 broken, 3 open
 * or cut, 4 open (a server here still writes it); usage and I/O errors throw.
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
  const verdict = verdictOf(result, publicKeys !== undefined);
  if (values.json) {
    const { problem, ...rest } = result;
    io.stdout.write(
      `${JSON.stringify({
        file: problem?.file ?? label,
        verdict: verdict.status,
        ...rest,
        running: verdict.running,
        ...(problem === undefined ? {} : { seq: problem.seq, line: problem.line, problem: problem.message }),
      })}\n`,
    );
  } else {
    io.stdout.write(`${describeVerdict(label, result, verdict)}\n`);
  }
  return verdict.exitCode;
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

export function describeVerdict(
  label: string,
  result: TrailVerifyResult,
  verdict: TrailVerdict = verdictOf(result, result.checkpoints.checked),
): string {
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
  if (verdict.status === 'intact')
    return `${base}; ${signed}; ends with a final checkpoint (its server stopped)`;
  const unsigned =
    checkpoints.unsigned === 0 ? '' : `; ${checkpoints.unsigned} unsigned records after the last checkpoint`;
  const legacy =
    checkpoints.finalCount === 0 && checkpoints.count > 0
      ? ' No checkpoint in it is marked final: a trail written before termgate marked its stop checkpoint final cannot show its end; verify it with --anchor.'
      : '';
  if (verdict.status === 'open') {
    const writers = verdict.running
      .map((w) => `pid ${w.pid} on ${w.hostname ?? '?'}, started ${w.since}`)
      .join('; ');
    return `${label}: OPEN, not final yet: a server that writes it still runs (${writers}); intact so far, ${result.records} records (seq 1..${result.head.seq}), head hash ${result.head.hash}; ${signed}${unsigned}. Verify again after it stops.${legacy}`;
  }
  return `${label}: OPEN OR CUT after seq ${result.head.seq}: intact so far, ${result.records} records${inFiles}, head hash ${result.head.hash}; ${signed}${unsigned}; but it does not end with a final checkpoint and no server that writes it runs on this host: it was cut after seq ${result.head.seq}, or its server was killed or runs elsewhere (only an anchor or a copy shipped elsewhere tells which).${legacy}`;
}
