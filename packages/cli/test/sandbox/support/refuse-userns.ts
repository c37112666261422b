/**
 * The fast simulation of a host that refuses user namespaces, as Docker's
 * and podman's default seccomp profiles (and Kubernetes' RuntimeDefault)
 * do: a launcher that installs a seccomp filter (libseccomp's Python
 * bindings, python3-seccomp) refusing `unshare` and `clone` with
 * CLONE_NEWUSER (EPERM) and `clone3` (ENOSYS, so that libc falls back to
 * `clone`), then executes the rest of its argv. Everything it starts
 * inherits the filter, so bwrap cannot create its namespaces and `auto`
 * must choose the Landlock tier.
 */
const CODE = `
import errno, os, sys
import seccomp
f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
NEWUSER = 0x10000000
for name in ("unshare", "clone"):
    f.add_rule(seccomp.ERRNO(errno.EPERM), name, seccomp.Arg(0, seccomp.MASKED_EQ, NEWUSER, NEWUSER))
f.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
f.load()
os.execvp(sys.argv[1], sys.argv[1:])
`;

/** The argv prefix that runs a program with user namespaces refused. */
export const REFUSE_USERNS: readonly string[] = Object.freeze(['/usr/bin/python3', '-I', '-c', CODE]);
