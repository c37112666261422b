/** Local error codes of the terminal host. Protocol adapters translate them at the edge. */
export type TermhostErrorCode =
  | 'TERMINAL_NOT_FOUND'
  | 'GATE_DENIED'
  | 'PROGRAM_NOT_FOUND'
  | 'PERMISSION_DENIED'
  | 'CWD_NOT_FOUND'
  | 'CWD_NOT_DIRECTORY'
  | 'SPAWN_FAILED'
  | 'TERMINAL_LIMIT_REACHED'
  | 'INVALID_SPEC'
  | 'HOST_CLOSED';

export class TermhostError extends Error {
  override readonly name = 'TermhostError';
  constructor(
    readonly code: TermhostErrorCode,
    message: string,
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
  }

  /** Brand check that survives duplicated module copies. */
  static is(value: unknown): value is TermhostError {
    return (
      value instanceof Error &&
      value.name === 'TermhostError' &&
      typeof (value as TermhostError).code === 'string'
    );
  }
}
