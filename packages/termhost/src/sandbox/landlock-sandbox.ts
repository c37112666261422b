import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type { ProcessSpawner, SpawnedProcess, SpawnRequest } from '../ports/process-spawner.js';
import type { SandboxProfile } from '../sandbox-profile.js';
import { type SandboxNetwork, trustRepositories } from './bubblewrap-sandbox.js';
import { assertExecutable } from './executable-check.js';
import { HostAllowlist } from './host-allowlist.js';
import { HttpAllowlistProxy } from './http-allowlist-proxy.js';
import { cgroupLimits, type KernelLayers, kernelLayers, kernelSteps } from './kernel-layers.js';
import { type LandlockSteps, landlockArgv, landlockVersionArgv } from './landlock-launcher.js';
import { HANDLED_FS, HANDLED_NET, LANDLOCK_MIN_ABI, landlockRules, SCOPED } from './landlock-rules.js';
import { LoopbackRelay } from './loopback-relay.js';
import { launch } from './perl-launcher.js';
import { proxyEnvironment } from './proxy-credentials.js';
import type { SandboxIdentity } from './sandbox-identity.js';
import type { SandboxLimits } from './sandbox-limits.js';
import { SandboxUnavailableError, sandboxError } from './sandbox-unavailable-error.js';
import type { TerminalCgroup } from './terminal-cgroups.js';

export interface LandlockSandboxOptions {
  readonly network: SandboxNetwork;
  /** A directory only termgate can use (mode 0700): the filter, the proxy's socket. */
  readonly runtimeDir: string;
  /** Where each terminal's own temporary directory is made (its `TMPDIR`). */
  readonly privateTmp: string;
  readonly identity?: SandboxIdentity | null;
  readonly limits?: SandboxLimits;
}

/** The socket families a command may open: AF_INET, AF_INET6, AF_NETLINK (the kernel's own, never out). Not AF_UNIX: see docs/SANDBOX-TIERS.md. */
const SOCKET_FAMILIES = Object.freeze([2, 10, 16]);
/** The filter's descriptor in the chain (the first after stdio), read and closed by the Landlock launcher. */
const FILTER_FD = 3;

/**
 * The Landlock tier (docs/SANDBOX-TIERS.md): where user namespaces are
 * refused (a container under its runtime's default seccomp profile, a
 * Kubernetes pod, Ubuntu 24.04 without an AppArmor profile for bwrap), every
 * command runs under Landlock rules computed from its profile
 * (`landlock-rules.ts`), `no_new_privs` and the syscall filter with the
 * tier's socket rules, as the sandbox user when serving as root, with a
 * fresh keyring and the limits (a cgroup per terminal where one can be made,
 * else rlimits). No namespace: the command shares the host's pid space and
 * network stack, which Landlock scopes (signals and abstract Unix sockets to
 * the command's own domain, TCP connect to the proxy's port only).
 *
 * Failing closed: `start` throws {@link SandboxUnavailableError} naming the
 * fix, after running `true` once through the whole chain; a spawn without a
 * profile, or whose network the tier did not set up, is refused (`ESANDBOX`).
 */
export class LandlockSandbox {
  #closed = false;
  #fail: (reason: string) => void = () => {};
  /** Resolves with the reason once the proxy or its relay failed while open (see `BubblewrapSandbox.failed`). */
  readonly failed: Promise<string> = new Promise((resolve) => {
    this.#fail = resolve;
  });

  private constructor(
    private readonly kernel: KernelLayers,
    private readonly abi: number,
    private readonly options: LandlockSandboxOptions,
    private readonly proxy: { proxy: HttpAllowlistProxy; relay: LoopbackRelay } | null,
  ) {
    const fail = (why: string): void => {
      if (!this.#closed) this.#fail(why);
    };
    proxy?.proxy.onError((error) => fail(`the sandbox's network proxy failed: ${error.message}`));
    proxy?.relay.onError((error) => fail(`the sandbox's proxy relay failed: ${error.message}`));
  }

  /** The kernel's Landlock ABI (0: none), asked through the launcher's `version`. */
  static abi(perl: string): number {
    const argv = landlockVersionArgv(perl);
    const out = execFileSync(argv[0]!, argv.slice(1), { encoding: 'utf8', timeout: 10_000 });
    const abi = Number.parseInt(out.trim(), 10);
    return Number.isSafeInteger(abi) ? abi : 0;
  }

  static async start(options: LandlockSandboxOptions): Promise<LandlockSandbox> {
    const kernel = kernelLayers({
      runtimeDir: options.runtimeDir,
      identity: options.identity ?? null,
      ...(options.limits !== undefined && { limits: options.limits }),
      landlock: { socketFamilies: SOCKET_FAMILIES, streamOnly: options.network !== 'all' },
    });
    const abi = LandlockSandbox.abi(kernel.perl);
    if (abi < LANDLOCK_MIN_ABI) {
      throw new SandboxUnavailableError(
        abi === 0
          ? 'Landlock is not enabled in this kernel'
          : `this kernel's Landlock ABI is ${abi}; the tier needs ${LANDLOCK_MIN_ABI} (Linux 6.12: scoped signals and abstract Unix sockets)`,
        'run on Linux 6.12 or later with Landlock in the LSM list (lsm=landlock,…), or allow user namespaces for the namespaces tier',
      );
    }
    if (kernel.identity !== null) {
      // Search only: the sandbox user reaches its own directory inside, never lists the others.
      chmodSync(options.privateTmp, 0o711);
    }
    let proxy: { proxy: HttpAllowlistProxy; relay: LoopbackRelay } | null = null;
    if (typeof options.network === 'object') {
      const socketPath = join(options.runtimeDir, 'proxy.sock');
      const started = await HttpAllowlistProxy.listen({
        socketPath,
        allowlist: new HostAllowlist(options.network.allow),
        onRefused: options.network.onRefused,
        ...(options.network.onAllowed !== undefined && { onAllowed: options.network.onAllowed }),
      });
      try {
        proxy = { proxy: started, relay: await LoopbackRelay.listen(socketPath) };
      } catch (error) {
        await started.close();
        throw error;
      }
    }
    const sandbox = new LandlockSandbox(kernel, abi, options, proxy);
    try {
      await sandbox.#probe();
    } catch (error) {
      await sandbox.close();
      throw error;
    }
    return sandbox;
  }

  /** The layers in force, one line each, for the server-start record. */
  get layers(): Readonly<Record<string, string>> {
    const k = this.kernel.layers;
    const network =
      this.options.network === 'all'
        ? "the host's network (Landlock handles no network access)"
        : this.proxy === null
          ? 'no TCP connect or bind (Landlock), no UDP or other socket family (seccomp)'
          : `TCP connect only to port ${this.proxy.relay.port} (termgate's proxy relay on 127.0.0.1; Landlock matches the port, not the address), no bind, no UDP or other socket family (seccomp)`;
    return {
      tier: `landlock (Landlock ABI ${this.abi}, no_new_privs, seccomp; no namespaces)`,
      identity: k.identity,
      keyring: k.keyring,
      filter: `seccomp (libseccomp), native ABI only; refused: ${this.kernel.filter.refused.join(', ')}`,
      // No mount namespace, so no tmpfs: each terminal's TMPDIR is a directory on the host's disk.
      limits: `${k.limits.replace(/; \/tmp and \/dev\/shm: [^;]*/, '')}; TMPDIR a directory of each terminal's own, bounded by the disk only`,
      network,
      processes:
        this.kernel.cgroups === null
          ? 'no pid namespace and no cgroup: kill, release and shutdown reach the process group only (a setsid escapes); signals and abstract Unix sockets scoped to the command (Landlock); host processes visible in /proc, not traceable'
          : 'a cgroup per terminal: kill, release and shutdown reach every process of the tree; signals and abstract Unix sockets scoped to the command (Landlock); host processes visible in /proc, not traceable',
    };
  }

  spawner(inner: ProcessSpawner): ProcessSpawner {
    return { spawn: (request) => this.#spawn(inner, request) };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.proxy?.relay.close();
    await this.proxy?.proxy.close();
  }

  /** Runs `true` once through the whole chain, so that a layer the machine cannot apply stops the start. */
  async #probe(): Promise<void> {
    const profile: SandboxProfile = {
      filesystem: { writable: [], readOnly: [], hiddenDirectories: [], hiddenFiles: [], tmp: '/tmp' },
      network: this.options.network === 'all' ? 'all' : this.proxy === null ? 'none' : 'proxy',
    };
    const { CrossSpawnProcessSpawner } = await import('../adapters/cross-spawn-process-spawner.js');
    const chunks: string[] = [];
    let code: number | null = null;
    try {
      const child = await this.#spawn(new CrossSpawnProcessSpawner(), {
        argv: ['/bin/true'],
        cwd: '/',
        env: { PATH: '/usr/bin:/bin' },
        sandbox: profile,
      });
      child.output.on('data', (chunk: Buffer) => chunks.push(chunk.toString('utf8')));
      const exit = await child.exited;
      code = exit.exitCode;
    } catch (error) {
      throw new SandboxUnavailableError(
        `the Landlock tier cannot run a command here: ${(error as Error).message}`,
        'check that perl, python3-seccomp and util-linux are installed and the sandbox user exists',
      );
    }
    if (code !== 0) {
      throw new SandboxUnavailableError(
        `the Landlock tier cannot run a command here: ${chunks.join('').trim() || `exit ${code}`}`,
        'check that the kernel allows Landlock and seccomp (a container runtime must not refuse landlock_*), and that the sandbox user exists',
      );
    }
  }

  async #spawn(inner: ProcessSpawner, request: SpawnRequest): Promise<SpawnedProcess> {
    const profile = request.sandbox;
    if (profile === undefined) throw sandboxError('the request carries no sandbox profile');
    if (this.#closed) throw sandboxError('the sandbox was closed');
    const network = this.options.network === 'all' ? 'all' : this.proxy === null ? 'none' : 'proxy';
    if (profile.network !== network && !(profile.network === 'none' && network === 'proxy')) {
      throw sandboxError(
        `the profile needs network "${profile.network}" but the sandbox was set up for "${network}"`,
      );
    }
    assertExecutable(request);
    const identity = this.kernel.identity;
    // The variables that steer Perl, the loader or prlimit reach only the command, never a launcher.
    const env: Record<string, string> = {};
    const heldBack: string[] = [];
    for (const [name, value] of Object.entries(request.env)) {
      if (/^(PERL|LD_)/.test(name)) heldBack.push(`${name}=${value}`);
      else env[name] = value;
    }
    // The workspace's repositories are the person's, their git dirs read-only here (see `trustRepositories`).
    if (identity !== null) trustRepositories(env);
    let tmp: string | null = null;
    if (profile.filesystem.tmp !== null) {
      tmp = join(this.options.privateTmp, `t-${randomUUID()}`);
      mkdirSync(tmp, { mode: 0o700 });
      if (identity !== null) chownSync(tmp, identity.uid, identity.gid);
      env.TMPDIR = tmp;
    }
    let credential: string | null = null;
    if (profile.network === 'proxy' && this.proxy !== null) {
      credential = request.terminalId ?? `spawn-${randomUUID()}`;
      Object.assign(
        env,
        proxyEnvironment(credential, this.proxy.proxy.issue(credential), this.proxy.relay.port),
      );
    }
    const steps: LandlockSteps = {
      handled: { fs: HANDLED_FS, net: profile.network === 'all' ? 0 : HANDLED_NET, scoped: SCOPED },
      paths: landlockRules(profile, tmp),
      connectPorts: profile.network === 'proxy' && this.proxy !== null ? [this.proxy.relay.port] : [],
      abi: LANDLOCK_MIN_ABI,
      seccompFd: FILTER_FD,
    };
    const cleanup = (): void => {
      if (credential !== null) this.proxy?.proxy.revoke(credential);
      if (tmp !== null) rmSync(tmp, { recursive: true, force: true });
    };
    let cgroup: TerminalCgroup | null = null;
    let filterFd: number | null = null;
    let spawned: SpawnedProcess;
    try {
      cgroup = this.kernel.cgroups?.create(cgroupLimits(this.kernel.limits)) ?? null;
      filterFd = openSync(this.kernel.filter.path, 'r');
      const launched = launch(
        this.kernel.perl,
        kernelSteps(this.kernel, { cgroup, namespaces: undefined }),
        [...this.kernel.inner, ...landlockArgv(this.kernel.perl, steps, request.argv, heldBack)],
        env,
      );
      spawned = await inner.spawn({
        argv: launched.argv,
        cwd: request.cwd,
        env: launched.env,
        extraFds: [filterFd],
      });
    } catch (error) {
      cleanup();
      cgroup?.remove();
      throw error;
    } finally {
      if (filterFd !== null) closeSync(filterFd);
    }
    void spawned.exited.finally(() => {
      // With a cgroup, nothing of the tree is left once the leader ended and the group was killed.
      if (cgroup !== null) killCgroup(cgroup);
      cleanup();
      cgroup?.remove();
    });
    return cgroup === null ? spawned : inCgroup(spawned, cgroup);
  }
}

/** The command's process: signals reach its process group and every process of its cgroup. */
function inCgroup(spawned: SpawnedProcess, cgroup: TerminalCgroup): SpawnedProcess {
  return {
    pid: spawned.pid,
    output: spawned.output,
    exited: spawned.exited,
    signalGroup: (signal) => {
      const inGroup = spawned.signalGroup(signal);
      if (signal === 'SIGKILL') killCgroup(cgroup);
      else for (const pid of members(cgroup)) trySignal(pid, signal);
      return inGroup || members(cgroup).length > 0;
    },
    groupAlive: () => spawned.groupAlive() || members(cgroup).length > 0,
    diesWithLeader: false,
  };
}

function members(cgroup: TerminalCgroup): number[] {
  const pids: number[] = [];
  for (const dir of cgroup.directories) {
    try {
      for (const line of readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n')) {
        const pid = Number.parseInt(line, 10);
        if (pid > 0) pids.push(pid);
      }
    } catch {
      // removed already
    }
  }
  return pids;
}

/** SIGKILL to the whole tree: `cgroup.kill` (v2, atomic against forks), else each member. */
function killCgroup(cgroup: TerminalCgroup): void {
  const kill = join(cgroup.directories[0] ?? '', 'cgroup.kill');
  if (cgroup.directories.length === 1 && existsSync(kill)) {
    try {
      writeFileSync(kill, '1');
      return;
    } catch {
      // fall back to each member
    }
  }
  for (const pid of members(cgroup)) trySignal(pid, 'SIGKILL');
}

function trySignal(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // gone
  }
}
