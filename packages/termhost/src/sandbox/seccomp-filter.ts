import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { findOnPath } from './executable-check.js';
import { SandboxUnavailableError } from './sandbox-unavailable-error.js';

/**
 * The system calls every sandboxed command is refused, with `EPERM` unless
 * said otherwise. docs/SANDBOX-KERNEL.md gives the reason for each, and for
 * the notable calls left open.
 */
export const REFUSED_SYSCALLS: readonly string[] = Object.freeze([
  // The kernel keyring: the server's session and user keyrings hold other credentials.
  'keyctl',
  'add_key',
  'request_key',
  // New namespaces: a nested user namespace hands out a full capability set.
  'setns',
  // The mount family: rearranging the view would undo what hides or protects a path.
  'mount',
  'umount',
  'umount2',
  'pivot_root',
  'chroot',
  'open_tree',
  'move_mount',
  'fsopen',
  'fsconfig',
  'fsmount',
  'fspick',
  'mount_setattr',
  // Kernel attack surface a build or dev server does not need.
  'bpf',
  'perf_event_open',
  'userfaultfd',
  'io_uring_setup',
  'io_uring_enter',
  'io_uring_register',
  'kexec_load',
  'kexec_file_load',
  'init_module',
  'finit_module',
  'delete_module',
  'uselib',
  'lookup_dcookie',
  // Reaching into another process's memory or descriptors (refused entirely, see the docs).
  'ptrace',
  'process_vm_readv',
  'process_vm_writev',
  'pidfd_getfd',
]);

/**
 * Socket address families no network namespace confines, refused with
 * `EAFNOSUPPORT` (the answer of a kernel without them): AF_VSOCK (40)
 * reaches the hypervisor side of a virtual machine from every namespace.
 */
const REFUSED_SOCKET_FAMILIES: Readonly<Record<string, number>> = Object.freeze({ AF_VSOCK: 40 });

/**
 * The calls that set a mode, with the index of their mode argument and of
 * their open flags (`null`: always a mode): a mode with S_ISUID or S_ISGID
 * is refused, so no command leaves a set-user-ID file (of its uid) on the
 * host, where NO_NEW_PRIVS no longer holds.
 */
const SETID_MODE_CALLS: ReadonlyArray<readonly [string, number, number | null]> = Object.freeze([
  ['chmod', 1, null],
  ['fchmod', 1, null],
  ['fchmodat', 2, null],
  ['fchmodat2', 2, null],
  ['mknod', 1, null],
  ['mknodat', 2, null],
  ['creat', 1, null],
  ['open', 2, 1],
  ['openat', 3, 2],
]);

/** Namespace flags: `unshare` with any of them, and `clone` with any but CLONE_NEWTIME, is refused. */
const NAMESPACE_FLAGS: Readonly<Record<string, number>> = Object.freeze({
  CLONE_NEWNS: 0x00020000,
  CLONE_NEWCGROUP: 0x02000000,
  CLONE_NEWUTS: 0x04000000,
  CLONE_NEWIPC: 0x08000000,
  CLONE_NEWUSER: 0x10000000,
  CLONE_NEWPID: 0x20000000,
  CLONE_NEWNET: 0x40000000,
  CLONE_NEWTIME: 0x00000080,
});

/**
 * Compiles the filter with libseccomp's Python bindings (never hand-written
 * BPF): default allow, the calls above refused, `clone3` answered `ENOSYS`
 * (its flags live in memory a filter cannot read, so libc falls back to
 * `clone`, whose flags it can), `clone` and `unshare` refused when they ask
 * for a namespace, `socket` refused for the families above, a set-ID mode
 * refused in the calls that set a mode (`openat2`, whose mode a filter cannot
 * read, answers `ENOSYS`). Only the native ABI is allowed: a syscall of another
 * architecture (the i386 `int 0x80` entry, x32 on x86-64) kills the process,
 * so no second syscall table is a way around the rules.
 */
const COMPILER = `
import errno, json, sys
import seccomp

spec = json.loads(sys.argv[1])
f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
f.set_attr(seccomp.Attr.ACT_BADARCH, seccomp.KILL_PROCESS)
def known(name):
    try:
        seccomp.resolve_syscall(seccomp.Arch.NATIVE, name)
        return True
    except Exception:
        return False
for name in spec["refused"]:
    if known(name):
        f.add_rule(seccomp.ERRNO(errno.EPERM), name)
f.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
# Set-user-ID and set-group-ID bits, as systemd's RestrictSUIDSGID=: (syscall, mode argument, flags argument).
for name, mode_arg, flags_arg in spec["setidModes"]:
    if not known(name):
        continue
    for bit in (0o4000, 0o2000):
        if flags_arg is None:
            f.add_rule(seccomp.ERRNO(errno.EPERM), name, seccomp.Arg(mode_arg, seccomp.MASKED_EQ, bit, bit))
            continue
        for creating in (0o100, 0o20000000):  # O_CREAT, __O_TMPFILE
            f.add_rule(seccomp.ERRNO(errno.EPERM), name,
                       seccomp.Arg(flags_arg, seccomp.MASKED_EQ, creating, creating),
                       seccomp.Arg(mode_arg, seccomp.MASKED_EQ, bit, bit))
# openat2 takes its mode in memory a filter cannot read: ENOSYS, and callers fall back to openat.
if known("openat2"):
    f.add_rule(seccomp.ERRNO(errno.ENOSYS), "openat2")
for family in spec["refusedFamilies"]:
    f.add_rule(seccomp.ERRNO(errno.EAFNOSUPPORT), "socket", seccomp.Arg(0, seccomp.EQ, family))
for name, flag in spec["namespaceFlags"].items():
    f.add_rule(seccomp.ERRNO(errno.EPERM), "unshare", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    # In clone's flags the low byte is the exit signal, so CLONE_NEWTIME (0x80) is no flag there.
    if flag > 0xff:
        f.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
# The Landlock tier (no network namespace): see LandlockFilterRules.
ll = spec.get("landlock")
if ll is not None:
    low = 0xffffffff  # the kernel reads these int arguments as 32 bits: compare only those
    for family in range(64):
        if family not in ll["socketFamilies"]:
            f.add_rule(seccomp.ERRNO(errno.EAFNOSUPPORT), "socket", seccomp.Arg(0, seccomp.MASKED_EQ, low, family))
        if family != 1:
            f.add_rule(seccomp.ERRNO(errno.EAFNOSUPPORT), "socketpair", seccomp.Arg(0, seccomp.MASKED_EQ, low, family))
    if ll["streamOnly"]:
        for family in (2, 10):
            fam = seccomp.Arg(0, seccomp.MASKED_EQ, low, family)
            for kind in range(16):
                if kind != 1:  # SOCK_STREAM; the bits above 0xf are SOCK_NONBLOCK/SOCK_CLOEXEC
                    f.add_rule(seccomp.ERRNO(errno.EPERM), "socket", fam, seccomp.Arg(1, seccomp.MASKED_EQ, 0xf, kind))
            # Only IPPROTO_IP (0) and IPPROTO_TCP (6): MPTCP (262), SCTP (132) and the rest escape Landlock's TCP rules.
            for proto in (1, 2, 3, 4, 5, 7):
                f.add_rule(seccomp.ERRNO(errno.EPERM), "socket", fam, seccomp.Arg(2, seccomp.MASKED_EQ, low, proto))
            for bit in range(3, 32):
                f.add_rule(seccomp.ERRNO(errno.EPERM), "socket", fam, seccomp.Arg(2, seccomp.MASKED_EQ, 1 << bit, 1 << bit))
        # MSG_FASTOPEN connects inside sendto/sendmsg, past Landlock's connect hook.
        fastopen = 0x20000000
        for name, arg in (("sendto", 3), ("sendmsg", 2), ("sendmmsg", 3)):
            f.add_rule(seccomp.ERRNO(errno.EPERM), name, seccomp.Arg(arg, seccomp.MASKED_EQ, fastopen, fastopen))
with open(spec["out"], "wb") as out:
    f.export_bpf(out)
`;

/**
 * What the Landlock tier's filter refuses beyond the common one, where no
 * network namespace stands between a command and the host's network:
 * `socket` of every family but `socketFamilies` (EAFNOSUPPORT), `socketpair`
 * of every family but AF_UNIX, and with `streamOnly` (every network but
 * `all`) an AF_INET/AF_INET6 socket that is not SOCK_STREAM with protocol 0
 * or IPPROTO_TCP (UDP, raw, MPTCP, SCTP: Landlock's rules name TCP ports
 * only), and `sendto`/`sendmsg`/`sendmmsg` with MSG_FASTOPEN (TCP Fast Open
 * connects past Landlock's connect check).
 */
export interface LandlockFilterRules {
  readonly socketFamilies: readonly number[];
  readonly streamOnly: boolean;
}

/** Where the compiler's interpreter is looked for: the system's, which python3-seccomp installs into. */
const SYSTEM_PATH = '/usr/bin:/bin';

/** A compiled filter: BPF for bwrap's `--seccomp FD`. */
export interface SeccompFilter {
  /** The file holding the program; open it anew for each command (bwrap reads its descriptor to the end). */
  readonly path: string;
  /** The calls refused, for the server-start record. */
  readonly refused: readonly string[];
}

/**
 * Compiles the filter into `outPath` (once per server start). Throws
 * {@link SandboxUnavailableError} naming the package to install when the
 * system's `python3` or libseccomp's bindings are missing, or the result is
 * not a BPF program.
 */
export function compileSeccompFilter(outPath: string, landlock?: LandlockFilterRules): SeccompFilter {
  const python = findOnPath('python3', SYSTEM_PATH);
  if (python === null) {
    throw new SandboxUnavailableError(
      'the syscall filter cannot be compiled: python3 was not found in /usr/bin',
      'install the Debian/Ubuntu packages "python3" and "python3-seccomp" (apt-get install python3-seccomp)',
    );
  }
  const spec = JSON.stringify({
    refused: REFUSED_SYSCALLS,
    namespaceFlags: NAMESPACE_FLAGS,
    refusedFamilies: Object.values(REFUSED_SOCKET_FAMILIES),
    setidModes: SETID_MODE_CALLS,
    ...(landlock !== undefined && { landlock }),
    out: outPath,
  });
  try {
    // -I: isolated, neither the user's site-packages nor PYTHON* variables; the system's dist-packages stay.
    execFileSync(python, ['-I', '-c', COMPILER, spec], {
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 20_000,
      env: { PATH: SYSTEM_PATH },
    });
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr ?? '').trim();
    const missing = /No module named .?seccomp/.test(stderr);
    throw new SandboxUnavailableError(
      `the syscall filter cannot be compiled: ${missing ? "libseccomp's Python bindings are missing" : stderr || (error as Error).message}`,
      'install the Debian/Ubuntu package "python3-seccomp" (apt-get install python3-seccomp), which brings libseccomp2',
    );
  }
  const size = readFileSync(outPath).length;
  if (size === 0 || size % 8 !== 0) {
    throw new SandboxUnavailableError(
      `the syscall filter compiled to ${size} bytes, not a BPF program`,
      'reinstall python3-seccomp and libseccomp2',
    );
  }
  return {
    path: outPath,
    refused: [
      ...REFUSED_SYSCALLS,
      'clone3 (ENOSYS)',
      'clone/unshare with namespace flags',
      ...Object.keys(REFUSED_SOCKET_FAMILIES).map((family) => `socket(${family}) (EAFNOSUPPORT)`),
      'chmod/fchmod/fchmodat/fchmodat2/mknod/mknodat/creat/open/openat with a set-user-ID or set-group-ID mode',
      'openat2 (ENOSYS)',
      ...(landlock === undefined
        ? []
        : [
            `socket of every family but ${landlock.socketFamilies.join('/')} and socketpair but AF_UNIX (EAFNOSUPPORT)`,
            ...(landlock.streamOnly
              ? [
                  'IPv4/IPv6 sockets but TCP (no UDP, raw, MPTCP or SCTP)',
                  'sendto/sendmsg/sendmmsg with MSG_FASTOPEN',
                ]
              : []),
          ]),
    ],
  };
}
