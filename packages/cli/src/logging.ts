import type { Writable } from 'node:stream';
import { type Level, type Logger, pino } from 'pino';

export const LOG_LEVELS: readonly Level[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'];
/** The default `--log-level` of `serve` and `acp-proxy` alike. */
export const DEFAULT_LOG_LEVEL: Level = 'info';

/** `json`: one pino JSON object a line; `pretty`: one human line per record. */
export type LogFormat = 'json' | 'pretty';
export const LOG_FORMATS: readonly LogFormat[] = ['json', 'pretty'];

/** The format when no `--log-format` is given: human lines for a person at a terminal, JSON for everyone else. */
export function resolveLogFormat(chosen: LogFormat | null, stderr: Writable): LogFormat {
  return chosen ?? ((stderr as { isTTY?: boolean }).isTTY === true ? 'pretty' : 'json');
}

/**
 * The root logger, on stderr (fd 2) and written synchronously so nothing is
 * lost at exit. stdout belongs to the protocol and never receives a log
 * line. `pretty` renders each record with pino-pretty (pino's own
 * formatter; colours only when stderr is a terminal), loaded only then.
 */
export async function createStderrLogger(level: Level | 'silent', format: LogFormat): Promise<Logger> {
  if (format === 'json') {
    return pino({ name: 'termgate', level }, pino.destination({ dest: 2, sync: true }));
  }
  const { default: pretty } = await import('pino-pretty');
  return pino(
    { name: 'termgate', level },
    pretty({ destination: 2, sync: true, colorize: process.stderr.isTTY === true, ignore: 'pid,hostname' }),
  );
}

/**
 * The operator's lines: which policy and trail are in use, the sandbox's
 * state, and the audit trail's head at start and stop (the anchors
 * `termgate audit verify --anchor` takes). They are printed whatever the log
 * level, `silent` included: an anchor that is not printed cannot be kept.
 */
export interface Notices {
  notice(message: string, fields?: Readonly<Record<string, unknown>>): void;
  /** Why the process refuses to go on (a start that failed closed, an agent that cannot start). */
  problem(message: string, fields?: Readonly<Record<string, unknown>>): void;
}

/**
 * `pretty`: `termgate: MESSAGE` lines (`termgate COMMAND: MESSAGE` for a problem);
 * `json`: one pino JSON object a line (level info, or error for a problem;
 * the fields next to `msg`), like the log's, so that a log collector reads
 * one format.
 */
export function createNotices(format: LogFormat, stderr: Writable, command: string): Notices {
  if (format === 'pretty') {
    return {
      notice: (message) => stderr.write(`termgate: ${message}\n`),
      problem: (message) => stderr.write(`termgate ${command}: ${message}\n`),
    };
  }
  const log = pino({ name: 'termgate', level: 'info' }, stderr);
  return {
    notice: (message, fields) => log.info(fields ?? {}, message),
    problem: (message, fields) => log.error(fields ?? {}, message),
  };
}
