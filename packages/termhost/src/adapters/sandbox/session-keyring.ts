import { SandboxUnavailableError } from './sandbox-unavailable-error.js';

/** keyctl(2)'s number per Node architecture; KEYCTL_JOIN_SESSION_KEYRING is 1 everywhere. */
const KEYCTL_SYSCALL: Readonly<Record<string, number>> = Object.freeze({ x64: 250, arm64: 219 });

/**
 * The argv prefix that joins a new, empty, anonymous session keyring
 * (keyctl(2) KEYCTL_JOIN_SESSION_KEYRING, no name) and execs what follows.
 * Perl (perl-base, essential on Debian) makes the one call: keyutils'
 * `keyctl session -` does the same but writes a line to stderr, which is
 * the command's output. It runs before the syscall filter, which refuses keyctl.
 */
export function sessionKeyringPrefix(perl: string): string[] {
  const nr = KEYCTL_SYSCALL[process.arch];
  if (nr === undefined) {
    throw new SandboxUnavailableError(
      `a fresh session keyring per command is not implemented on ${process.arch}`,
      'run termgate on x86-64 or arm64 Linux, or set `sandbox.mode: off` in the policy',
    );
  }
  const script = [
    `syscall(${nr}, 1, 0) >= 0 or die "termgate: cannot create a session keyring: $!\\n";`,
    'exec { $ARGV[0] } @ARGV or die "termgate: exec $ARGV[0]: $!\\n";',
  ].join(' ');
  return [perl, '-e', script, '--'];
}
