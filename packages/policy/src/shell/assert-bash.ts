import { execFile } from 'node:child_process';
import { basename } from 'node:path';
import { promisify } from 'node:util';
import { PolicyError } from '../policy-file/policy-error.js';

const run = promisify(execFile);

/**
 * Refuses a `--shell` the policy engine cannot vouch for. The engine judges
 * lines with a bash grammar, so the host must run them with bash ≥ 4
 * (`bash --noprofile --norc -c LINE`): the basename must be `bash` and the
 * program must report a `BASH_VERSION` without reading startup files.
 * Resolves with the version; throws `PolicyError('SHELL_UNSUPPORTED')`.
 */
export async function assertBashCompatibleShell(shellPath: string): Promise<string> {
  const refuse = (why: string): never => {
    throw new PolicyError(
      'SHELL_UNSUPPORTED',
      `refusing shell ${shellPath}: ${why}; the policy engine judges bash syntax`,
    );
  };
  if (!/^bash(\d[\d.]*)?$/.test(basename(shellPath))) refuse('its name is not bash');
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.BASH_ENV;
  delete env.ENV;
  let version = '';
  try {
    const { stdout } = await run(shellPath, ['--noprofile', '--norc', '-c', 'echo "$BASH_VERSION"'], {
      env,
      timeout: 5000,
    });
    version = stdout.trim();
  } catch (error) {
    refuse(`it could not be run (${(error as Error).message.split('\n')[0]})`);
  }
  const major = Number.parseInt(version, 10);
  if (!(major >= 4)) refuse(`it reports BASH_VERSION "${version}" (need 4 or later)`);
  return version;
}
