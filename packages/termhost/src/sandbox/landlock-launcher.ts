/**
 * The Landlock tier's last step before a command (see `landlock-sandbox.ts`):
 * a small Perl script, like `perl-launcher.ts`, because Node has no binding
 * for these calls and Perl's `syscall` reaches them with no helper binary to
 * build or ship (perl-base is essential on Debian and is already the first
 * launcher of the chain).
 *
 * Contract: the steps run in this order, and any failing step writes one
 * `termgate: …` line to stderr and exits 125 before the program runs:
 *
 * 1. `seccompfd=N`: read the compiled BPF program (`seccomp-filter.ts`) from
 *    descriptor N (opened by the server: the file is not the command's to
 *    read) and close it;
 * 2. `prctl(PR_SET_NO_NEW_PRIVS)`: no set-user-ID or file capability raises
 *    privilege from here on (Landlock and an unprivileged filter need it);
 * 3. `landlock_create_ruleset` with the handled accesses
 *    (`handled=FS,NET,SCOPE`); refused when the kernel's ABI is below `abi=N`;
 * 4. one `landlock_add_rule` per `fs=ACCESS:PATH` (the path opened with
 *    O_PATH; a path that no longer exists is skipped: nothing to grant; on a
 *    file only the file accesses are kept) and per `port=N` (TCP connect);
 * 5. `landlock_restrict_self`: the rules hold for this process and every
 *    process it starts, and cannot be lifted;
 * 6. `prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER)` with the program read in 1;
 * 7. exec the program (argv after the first `--`), with the `env=NAME=VALUE`
 *    entries added (the variables that steer Perl or the dynamic loader never
 *    reach a launcher: see `perl-launcher.ts`).
 *
 * `version` alone prints the kernel's Landlock ABI (0: none) and exits 0.
 */
import { SandboxUnavailableError } from './sandbox-unavailable-error.js';

/** `prctl` per Node architecture; the Landlock calls are 444-446 on both (asm-generic numbering). */
const PRCTL: Readonly<Record<string, number>> = Object.freeze({ x64: 157, arm64: 167 });

const SCRIPT = String.raw`
sub fail { print STDERR "termgate: $_[0]: $!\n"; exit 125 }
my ($prctl, $create, $add, $restrict) = (PRCTL, 444, 445, 446);
if (@ARGV == 1 && $ARGV[0] eq 'version') { my $v = syscall($create, 0, 0, 1); print $v < 0 ? 0 : $v, "\n"; exit 0 }
my (%one, @fs, @ports, %later);
while (@ARGV) {
  my $a = shift @ARGV; last if $a eq '--';
  my ($k, $v) = split /=/, $a, 2;
  if ($k eq 'fs') { push @fs, $v } elsif ($k eq 'port') { push @ports, 0 + $v }
  elsif ($k eq 'env') { my ($n, $x) = split /=/, $v, 2; $later{$n} = $x } else { $one{$k} = $v }
}
@ARGV or fail 'no program to run';
my $bpf = '';
if (defined $one{seccompfd}) {
  open(my $f, '<&=', 0 + $one{seccompfd}) or fail "cannot read the syscall filter from fd $one{seccompfd}";
  binmode $f;
  local $/; $bpf = <$f>; close $f;
  (length($bpf) > 0 && length($bpf) % 8 == 0) or fail 'the syscall filter is not a BPF program';
}
syscall($prctl, 38, 1, 0, 0, 0) == 0 or fail 'cannot set no_new_privs';
my $abi = syscall($create, 0, 0, 1);
$abi >= ($one{abi} // 1) or fail "Landlock ABI $abi here, $one{abi} needed";
my ($hfs, $hnet, $hscope) = map { 0 + $_ } split /,/, $one{handled};
my $attr = pack('QQQ', $hfs, $hnet, $hscope);
my $rs = syscall($create, $attr, length($attr), 0);
$rs >= 0 or fail 'cannot create the Landlock ruleset';
for my $rule (@fs) {
  my ($access, $path) = split /:/, $rule, 2;
  $access = 0 + $access;
  # O_PATH | O_CLOEXEC: a handle on the hierarchy, not an open of its contents.
  sysopen(my $h, $path, 0x200000 | 0x80000) or do { next if $!{ENOENT}; fail "cannot open $path for a rule" };
  $access &= 0xC007 unless -d $h;  # a file takes only EXECUTE, WRITE_FILE, READ_FILE, TRUNCATE, IOCTL_DEV
  my $beneath = pack('Ql', $access, fileno($h));
  syscall($add, $rs, 1, $beneath, 0) == 0 or fail "cannot add the rule for $path";
  close $h;
}
for my $port (@ports) {
  my $net = pack('QQ', 2, $port);
  syscall($add, $rs, 2, $net, 0) == 0 or fail "cannot add the rule for TCP port $port";
}
syscall($restrict, $rs, 0) == 0 or fail 'cannot restrict this process with Landlock';
if (length $bpf) {
  my $prog = pack('S x6', length($bpf) / 8) . pack('p', $bpf);
  syscall($prctl, 22, 2, $prog, 0, 0) == 0 or fail 'cannot load the syscall filter';
}
@ENV{keys %later} = values %later;
exec { $ARGV[0] } @ARGV;
print STDERR "termgate: exec $ARGV[0]: $!\n"; exit 127;
`;

/** One Landlock rule on a path: the access rights granted beneath it. */
export interface PathRule {
  readonly access: number;
  readonly path: string;
}

/** What the launcher applies (see the file's contract). */
export interface LandlockSteps {
  /** The accesses the ruleset handles: every one not granted by a rule is refused. */
  readonly handled: { readonly fs: number; readonly net: number; readonly scoped: number };
  readonly paths: readonly PathRule[];
  /** TCP ports a command may connect to (only when `handled.net` has LANDLOCK_ACCESS_NET_CONNECT_TCP). */
  readonly connectPorts: readonly number[];
  /** The lowest Landlock ABI the rules need. */
  readonly abi: number;
  /** The descriptor the compiled syscall filter (`seccomp-filter.ts`) is open on in the launcher; `null`: no filter. */
  readonly seccompFd: number | null;
}

/** The argv that runs `program` after `steps` with `perl` (absolute), and the variables `env` handed back. */
export function landlockArgv(
  perl: string,
  steps: LandlockSteps,
  program: readonly string[],
  heldBack: readonly string[] = [],
): string[] {
  const { fs, net, scoped } = steps.handled;
  return [
    perl,
    '-e',
    script(),
    '--',
    ...(steps.seccompFd === null ? [] : [`seccompfd=${steps.seccompFd}`]),
    `abi=${steps.abi}`,
    `handled=${fs},${net},${scoped}`,
    ...steps.paths.map((rule) => `fs=${rule.access}:${rule.path}`),
    ...steps.connectPorts.map((port) => `port=${port}`),
    ...heldBack.map((entry) => `env=${entry}`),
    '--',
    ...program,
  ];
}

/** The argv that prints the kernel's Landlock ABI (0 without Landlock). */
export function landlockVersionArgv(perl: string): string[] {
  return [perl, '-e', script(), '--', 'version'];
}

let cached: string | null = null;

function script(): string {
  if (cached !== null) return cached;
  const prctl = PRCTL[process.arch];
  if (prctl === undefined) {
    throw new SandboxUnavailableError(
      `the Landlock launcher is not implemented on ${process.arch}`,
      'run termgate on x86-64 or arm64 Linux, or set `sandbox.mode: off` in the policy',
    );
  }
  cached = SCRIPT.replace('PRCTL', String(prctl)).trim();
  return cached;
}
