import { stat } from 'node:fs/promises';
import { baseEnvironment, commandEnvironment } from './environment.js';
import { TermhostError } from './errors.js';
import type { ProcessSpawner, SpawnedProcess } from './ports/process-spawner.js';
import type { SandboxProfile } from './sandbox-profile.js';
import type { ResolvedTerminalSpec } from './terminal-spec.js';

/**
 * Starts a judged spec through the spawner: the command's environment
 * (the inherited one, non-interactive, and the request's own), the sandbox
 * profile the gate gave, and the spawner's failures as `TermhostError`s
 * (`PROGRAM_NOT_FOUND`, `PERMISSION_DENIED`, `SPAWN_FAILED`; `ESANDBOX`: the
 * sandbox could not confine it, so nothing ran).
 */
export class CommandLauncher {
  readonly #spawner: ProcessSpawner;
  readonly #argvEnv: Readonly<Record<string, string>>;
  readonly #lineEnv: Readonly<Record<string, string>>;

  constructor(spawner: ProcessSpawner, inheritEnv: Readonly<Record<string, string | undefined>>) {
    this.#spawner = spawner;
    this.#argvEnv = baseEnvironment(inheritEnv, false);
    this.#lineEnv = baseEnvironment(inheritEnv, true);
  }

  async spawn(
    spec: ResolvedTerminalSpec,
    requestedEnv: Readonly<Record<string, string>>,
    sandbox: SandboxProfile | undefined,
    terminalId: string,
  ): Promise<SpawnedProcess> {
    const line = spec.args === null;
    const env = commandEnvironment(line ? this.#lineEnv : this.#argvEnv, requestedEnv, line);
    const program = spec.argv[0]!;
    try {
      return await this.#spawner.spawn({
        argv: spec.argv,
        cwd: spec.cwd,
        env,
        terminalId,
        ...(sandbox !== undefined && { sandbox }),
      });
    } catch (error) {
      const errno = (error as NodeJS.ErrnoException | undefined)?.code;
      const details = { program, cwd: spec.cwd, errno: errno ?? null };
      if (errno === 'ENOENT') {
        throw new TermhostError(
          'PROGRAM_NOT_FOUND',
          `Program not found: ${program} (cwd ${spec.cwd})`,
          details,
        );
      }
      if (errno === 'ESANDBOX') {
        throw new TermhostError(
          'SPAWN_FAILED',
          `The sandbox could not confine ${program}, so it was not started: ${error instanceof Error ? error.message : String(error)}`,
          details,
        );
      }
      if (errno === 'EACCES') {
        throw new TermhostError(
          'PERMISSION_DENIED',
          `Permission denied executing ${program} (cwd ${spec.cwd})`,
          details,
        );
      }
      throw new TermhostError(
        'SPAWN_FAILED',
        `Could not start ${program} in ${spec.cwd}: ${error instanceof Error ? error.message : String(error)}`,
        details,
      );
    }
  }
}

/** Refuses a cwd that is not an accessible directory (`CWD_NOT_FOUND`, `CWD_NOT_DIRECTORY`, `PERMISSION_DENIED`). */
export async function checkDirectory(cwd: string): Promise<void> {
  let isDirectory: boolean;
  try {
    isDirectory = (await stat(cwd)).isDirectory();
  } catch (error) {
    const errno = (error as NodeJS.ErrnoException).code;
    if (errno === 'ENOENT' || errno === 'ENOTDIR') {
      throw new TermhostError('CWD_NOT_FOUND', `Working directory not found: ${cwd}`, { cwd });
    }
    if (errno === 'EACCES') {
      throw new TermhostError('PERMISSION_DENIED', `Working directory not accessible: ${cwd}`, { cwd });
    }
    throw new TermhostError('SPAWN_FAILED', `Cannot use working directory ${cwd}: ${String(error)}`, { cwd });
  }
  if (!isDirectory)
    throw new TermhostError('CWD_NOT_DIRECTORY', `Working directory is not a directory: ${cwd}`, { cwd });
}
