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
 * Whether `pretty` colours its lines: only when stderr is a terminal and
 * `NO_COLOR` is unset or empty (https://no-color.org: any non-empty value
 * turns colour off).
 */
export function wantsColour(stderr: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  return stderr.isTTY === true && (env.NO_COLOR ?? '') === '';
}

/**
 * The root logger, on stderr (fd 2) and written synchronously so nothing is
 * lost at exit. stdout belongs to the protocol and never receives a log
 * line. `pretty` renders each record with pino-pretty (pino's own
 * formatter; colours as `wantsColour` says), loaded only then.
 */
export async function createStderrLogger(level: Level | 'silent', format: LogFormat): Promise<Logger> {
  if (format === 'json') {
    return pino({ name: 'termgate', level }, pino.destination({ dest: 2, sync: true }));
  }
  const { default: pretty } = await import('pino-pretty');
  return pino(
    { name: 'termgate', level },
    pretty({
      destination: 2,
      sync: true,
      colorize: wantsColour(process.stderr, process.env),
      ignore: 'pid,hostname',
    }),
  );
}

/**
 * The operator's lines. `notice`: which policy and trail are in use and the
 * sandbox's state, printed when the log level lets `info` through (so
 * `--log-level warn` keeps stderr to what needs attention). `warning`:
 * something the operator should act on (a workspace that is the whole home
 * directory, a checkpoint that failed), printed unless the level is `error`
 * or above. `anchor`: the audit trail's head at start and stop (what
 * `termgate audit verify --anchor` takes), printed whatever the level,
 * `silent` included: an anchor that is not printed cannot be kept.
 */
export interface Notices {
  notice(message: string, fields?: Readonly<Record<string, unknown>>): void;
  warning(message: string, fields?: Readonly<Record<string, unknown>>): void;
  anchor(message: string, fields?: Readonly<Record<string, unknown>>): void;
  /** Why the process refuses to go on (a start that failed closed, an agent that cannot start). */
  problem(message: string, fields?: Readonly<Record<string, unknown>>): void;
}

/**
 * `pretty`: `termgate: MESSAGE` lines (`termgate: warning: MESSAGE`,
 * `termgate COMMAND: MESSAGE` for a problem); `json`: one pino JSON object a
 * line (level info, warn for a warning, error for a problem; the fields next
 * to `msg`), like the log's, so that a log collector reads one format.
 * `level` is the `--log-level`; anchors and problems ignore it.
 */
export function createNotices(
  format: LogFormat,
  stderr: Writable,
  command: string,
  level: Level | 'silent' = DEFAULT_LOG_LEVEL,
): Notices {
  const shows = (wanted: Level): boolean =>
    level !== 'silent' && LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(wanted);
  if (format === 'pretty') {
    return {
      notice: (message) => shows('info') && stderr.write(`termgate: ${message}\n`),
      warning: (message) => shows('warn') && stderr.write(`termgate: warning: ${message}\n`),
      anchor: (message) => stderr.write(`termgate: ${message}\n`),
      problem: (message) => stderr.write(`termgate ${command}: ${message}\n`),
    };
  }
  const log = pino({ name: 'termgate', level: 'info' }, stderr);
  return {
    notice: (message, fields) => shows('info') && log.info(fields ?? {}, message),
    warning: (message, fields) => shows('warn') && log.warn(fields ?? {}, message),
    anchor: (message, fields) => log.info(fields ?? {}, message),
    problem: (message, fields) => log.error(fields ?? {}, message),
  };
}
