/**
 * The one program that runs first in every command's chain, between the
 * server's fork and the command (or bwrap): a small Perl script (perl-base
 * is essential on Debian; Perl's `syscall` reaches any system call, so no
 * helper binary is needed). It replaces `/bin/sh` + `setpriv` + `nsenter` +
 * a keyring one-liner, one exec instead of four.
 *
 * Contract: the steps run in this order, each only when asked, and any
 * failing step writes one `termgate: …` line to stderr and exits non-zero
 * (125, or 127 when the program cannot be executed) before the program runs:
 *
 * 1. `args=PATH`: open PATH as fd 4 (for `bwrap --args 4`) and unlink it,
 *    still as the server's uid (the file lies in its private runtime directory);
 * 2. `cgroup=DIR` (repeatable): join the cgroup DIR (write our pid to its
 *    `cgroup.procs`) while still privileged; the command is born in it, the
 *    server never moves;
 * 3. `data=BYTES`: RLIMIT_DATA, soft and hard (per process, inherited);
 * 4. `noptrace`: drop CAP_SYS_PTRACE from the bounding and inheritable sets
 *    and clear the ambient set (as `setpriv --inh-caps=-sys_ptrace
 *    --bounding-set=-sys_ptrace`), for good;
 * 5. `uid=U gid=G`: setgroups(0), setresgid(G), setresuid(U), then checks
 *    that no id is still 0; leaving uid 0 clears every capability;
 * 6. `userns=PATH netns=PATH`: setns into the user namespace, then the
 *    network namespace it owns, keeping our uid (as `nsenter
 *    --preserve-credentials`). It comes after the drop: as the unprivileged
 *    owner of that user namespace we hold its capabilities, so the join is
 *    allowed, and bwrap, executed with a non-zero uid there, starts without them;
 * 6b. `inotify=I,W`: in the user namespace just entered (whose capabilities
 *    we hold), set `/proc/sys/user/max_inotify_instances` to I and
 *    `max_inotify_watches` to W: the kernel counts inotify per uid at every
 *    user namespace level up to the initial one, so every nested namespace
 *    (each command's) is then bounded by these together;
 * 7. `keyring`: join a new, empty, anonymous session keyring
 *    (KEYCTL_JOIN_SESSION_KEYRING), owned by the final uid;
 * 8. exec the program (argv after the first `--`), with the environment
 *    given plus the `env=NAME=VALUE` entries: the variables that steer Perl
 *    or the dynamic loader (`PERL*`, `LD_*`) never reach the launcher, which
 *    may run as root; the program gets them back (see {@link launch}).
 *
 * No no_new_privs here: bwrap sets it itself before it loads the filter.
 */
import { SandboxUnavailableError } from './sandbox-unavailable-error.js';

/** What the launcher does before it executes the program (see the file's contract). */
export interface LaunchSteps {
  readonly argsFile?: string;
  readonly cgroups?: readonly string[];
  readonly dataBytes?: number;
  readonly dropPtrace?: boolean;
  readonly identity?: { readonly uid: number; readonly gid: number };
  readonly namespaces?: { readonly user: string; readonly net: string };
  /** Step 6b: inotify bounds in the user namespace entered with `namespaces` (needs it). */
  readonly inotify?: { readonly instances: number; readonly watches: number };
  readonly keyring?: boolean;
}

/** System call numbers per Node architecture (asm-generic for arm64). */
const SYSCALLS: Readonly<Record<string, Readonly<Record<string, number>>>> = Object.freeze({
  x64: {
    setgroups: 116,
    setresuid: 117,
    setresgid: 119,
    setns: 308,
    keyctl: 250,
    prctl: 157,
    capget: 125,
    capset: 126,
    prlimit64: 302,
  },
  arm64: {
    setgroups: 159,
    setresuid: 147,
    setresgid: 149,
    setns: 268,
    keyctl: 219,
    prctl: 167,
    capget: 90,
    capset: 91,
    prlimit64: 261,
  },
});

const SCRIPT = String.raw`
$^F = 255;  # descriptors opened here survive exec (fd 4). No "use strict": loading it costs about 1 ms per command.
sub fail { print STDERR "termgate: $_[0]: $!\n"; exit 125 }
my %nr = (NR);
my (%one, @cgroups, %later, $argsfh);
while (@ARGV) {
  my $a = shift @ARGV; last if $a eq '--';
  my ($k, $v) = split /=/, $a, 2;
  # Numbers as numbers: syscall() passes a string argument as a pointer.
  if ($k eq 'cgroup') { push @cgroups, $v } elsif ($k eq 'env') { my ($n, $x) = split /=/, $v, 2; $later{$n} = $x } else { $one{$k} = defined $v && $v =~ /^\d+$/ ? 0 + $v : $v // 1 }
}
@ARGV or fail 'no program to run';
if (defined $one{args}) {
  open($argsfh, '<', $one{args}) or fail "cannot open $one{args}";
  if (fileno($argsfh) != 4) { require POSIX; POSIX::dup2(fileno($argsfh), 4) // fail 'dup2'; close $argsfh; }
  unlink $one{args} or fail "cannot remove $one{args}";
}
for my $dir (@cgroups) {
  open(my $c, '>', "$dir/cgroup.procs") or fail "cannot open the cgroup $dir";
  syswrite($c, "$$") or fail "cannot join the cgroup $dir";
  close $c;
}
if (defined $one{data}) {
  my $r = pack('QQ', $one{data}, $one{data});
  syscall($nr{prlimit64}, 0, 2, $r, 0) == 0 or fail 'cannot set RLIMIT_DATA';
}
if ($one{noptrace}) {
  syscall($nr{prctl}, 24, 19, 0, 0, 0) == 0 or fail 'cannot drop CAP_SYS_PTRACE from the bounding set';
  my $h = pack('LL', 0x20080522, 0); my $d = "\0" x 24;
  syscall($nr{capget}, $h, $d) == 0 or fail 'capget';
  my @c = unpack('L6', $d); $c[2] &= ~(1 << 19);
  $d = pack('L6', @c);
  syscall($nr{capset}, $h, $d) == 0 or fail 'cannot drop CAP_SYS_PTRACE from the inheritable set';
  syscall($nr{prctl}, 47, 4, 0, 0, 0) == 0 or fail 'cannot clear the ambient capabilities';
}
if (defined $one{uid}) {
  syscall($nr{setgroups}, 0, 0) == 0 or fail 'cannot clear the supplementary groups';
  syscall($nr{setresgid}, $one{gid}, $one{gid}, $one{gid}) == 0 or fail "cannot become gid $one{gid}";
  syscall($nr{setresuid}, $one{uid}, $one{uid}, $one{uid}) == 0 or fail "cannot become uid $one{uid}";
  ($< == $one{uid} && $> == $one{uid} && $( + 0 == $one{gid} && $) + 0 == $one{gid}) or fail 'the identity did not hold';
}
for my $ns (['userns', 0x10000000], ['netns', 0x40000000]) {
  next unless defined $one{$ns->[0]};
  open(my $f, '<', $one{$ns->[0]}) or fail "cannot open $one{$ns->[0]}";
  syscall($nr{setns}, fileno($f), $ns->[1]) == 0 or fail "cannot enter $one{$ns->[0]}";
  close $f;
}
if (defined $one{inotify}) {
  my @max = split /,/, $one{inotify};
  for my $i (0, 1) {
    my $name = ('instances', 'watches')[$i];
    open(my $f, '>', "/proc/sys/user/max_inotify_$name") or fail "cannot bound inotify $name";
    syswrite($f, $max[$i]) or fail "cannot bound inotify $name";
    close $f;
  }
}
if ($one{keyring}) { syscall($nr{keyctl}, 1, 0) >= 0 or fail 'cannot create a session keyring'; }
delete $ENV{PERL_BADLANG};
@ENV{keys %later} = values %later;
exec { $ARGV[0] } @ARGV;
print STDERR "termgate: exec $ARGV[0]: $!\n"; exit 127;
`;

/**
 * How to spawn `program` after `steps` with the environment `env`: the
 * argv, and the launcher's own environment (`env` without `PERL*` and `LD_*`,
 * which the launcher hands back to the program; `PERL_BADLANG=0` instead,
 * so that a locale the system lacks gives no warning in the command's output).
 */
export function launch(
  perl: string,
  steps: LaunchSteps,
  program: readonly string[],
  env: Readonly<Record<string, string>>,
): { argv: string[]; env: Record<string, string> } {
  const own: Record<string, string> = {};
  const later: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (/^(PERL|LD_)/.test(name)) later.push(`env=${name}=${value}`);
    else own[name] = value;
  }
  // A locale the system lacks would make perl warn on stderr, which is the command's output.
  own.PERL_BADLANG = '0';
  const argv = launcherArgv(perl, steps, program);
  const split = argv.indexOf('--', 4);
  argv.splice(split, 0, ...later);
  return { argv, env: own };
}

/**
 * The argv that runs `program` after `steps`, with `perl` (an absolute
 * path). Throws {@link SandboxUnavailableError} on an architecture whose
 * system call numbers are not known here, when a step needs one.
 */
export function launcherArgv(perl: string, steps: LaunchSteps, program: readonly string[]): string[] {
  const args: string[] = [];
  if (steps.argsFile !== undefined) args.push(`args=${steps.argsFile}`);
  for (const dir of steps.cgroups ?? []) args.push(`cgroup=${dir}`);
  if (steps.dataBytes !== undefined) args.push(`data=${Math.floor(steps.dataBytes)}`);
  if (steps.dropPtrace === true) args.push('noptrace');
  if (steps.identity !== undefined) args.push(`uid=${steps.identity.uid}`, `gid=${steps.identity.gid}`);
  if (steps.namespaces !== undefined) {
    args.push(`userns=${steps.namespaces.user}`, `netns=${steps.namespaces.net}`);
  }
  if (steps.inotify !== undefined) {
    if (steps.namespaces === undefined) throw new Error('the inotify step needs the namespaces step');
    args.push(`inotify=${Math.floor(steps.inotify.instances)},${Math.floor(steps.inotify.watches)}`);
  }
  if (steps.keyring === true) args.push('keyring');
  const needsSyscalls = args.some((a) => !/^(args|cgroup)=/.test(a));
  return [perl, '-e', script(needsSyscalls), '--', ...args, '--', ...program];
}

const scripts = new Map<boolean, string>();

function script(needsSyscalls: boolean): string {
  const cached = scripts.get(needsSyscalls);
  if (cached !== undefined) return cached;
  const numbers = SYSCALLS[process.arch];
  if (numbers === undefined && needsSyscalls) {
    throw new SandboxUnavailableError(
      `the launcher's system calls (identity, namespaces, keyring, limits) are not implemented on ${process.arch}`,
      'run termgate on x86-64 or arm64 Linux, or set `sandbox.mode: off` in the policy',
    );
  }
  const list = Object.entries(numbers ?? {})
    .map(([name, nr]) => `${name} => ${nr}`)
    .join(', ');
  const text = SCRIPT.replace('(NR)', `(${list})`).trim();
  scripts.set(needsSyscalls, text);
  return text;
}
