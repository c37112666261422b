import { type Level, type Logger, pino } from 'pino';

export const LOG_LEVELS: readonly Level[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'];

/**
 * The root logger: JSON lines on stderr (fd 2), written synchronously so
 * nothing is lost at exit. stdout belongs to the protocol and never
 * receives a log line.
 */
export function createStderrLogger(level: Level | 'silent'): Logger {
  return pino({ name: 'termgate', level }, pino.destination({ dest: 2, sync: true }));
}
