/** The sandbox cannot run on this machine: `reason` says what failed, `remedy` what to change. */
export class SandboxUnavailableError extends Error {
  override readonly name = 'SandboxUnavailableError';
  constructor(
    readonly reason: string,
    readonly remedy: string,
  ) {
    super(`the sandbox cannot start: ${reason}. To fix: ${remedy}`);
  }
}

/** A spawn the started sandbox refuses (code `ESANDBOX`): nothing runs. */
export function sandboxError(message: string): Error {
  return Object.assign(new Error(message), { code: 'ESANDBOX' });
}
