import type { Readable, Writable } from 'node:stream';

/**
 * The streams a CLI command talks to. `main.ts` passes the process's own;
 * tests pass PassThrough streams. A command resolves with its exit code and
 * never calls `process.exit` itself.
 */
export interface CliIo {
  readonly stdin: Readable;
  readonly stdout: Writable;
  readonly stderr: Writable;
}

/** A subcommand: its arguments after the subcommand name, the streams, and the exit code it resolves with. */
export type CliCommand = (argv: readonly string[], io: CliIo) => Promise<number>;
