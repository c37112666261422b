import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { closeSync, openSync, readFileSync, statSync } from 'node:fs';
import { unlink, writeFile } from 'node:fs/promises';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import type { ProcessSpawner, SpawnedProcess, SpawnRequest } from '../../ports/process-spawner.js';
import type { SandboxProfile } from '../../sandbox-profile.js';
import { assertExecutable, findOnPath } from '../executable-check.js';
import { type LaunchSteps, launch, launcherArgv } from '../perl-launcher.js';
import { type TerminalCgroup, TerminalCgroups } from '../terminal-cgroups.js';
import { bubblewrapArguments, type KernelConfinement } from './bubblewrap-arguments.js';
import { MAX_CONNECTIONS_PER_TERMINAL, MAX_PENDING_CONNECTIONS } from './connection-share.js';
import { HostAllowlist } from './host-allowlist.js';
import {
  HttpAllowlistProxy,
  type ProxiedConnection,
  type RefusedConnection,
} from './http-allowlist-proxy.js';
import { type SandboxIdentity, unreachableBy } from './sandbox-identity.js';
import {
  DEFAULT_SANDBOX_LIMITS,
  dataBytes,
  describeLimits,
  rlimitArguments,
  type SandboxLimits,
} from './sandbox-limits.js';
import { SandboxUnavailableError } from './sandbox-unavailable-error.js';
import { compileSeccompFilter, type SeccompFilter } from './seccomp-filter.js';

/** The loopback port of the proxy relay inside the sandboxes' network namespace. */
export const SANDBOX_PROXY_PORT = 3128;

export type SandboxNetwork =
  | 'all'
  | 'none'
  | {
      readonly allow: readonly string[];
      /** A connection the proxy refused; for the audit trail. Must not throw. */
      readonly onRefused: (refused: RefusedConnection) => void;
      /** An allowed connection (folded per window like refusals); for the audit trail. Must not throw. */
      readonly onAllowed?: (allowed: ProxiedConnection) => void;
    };

export interface BubblewrapSandboxOptions {
  readonly network: SandboxNetwork;
  /** A directory only termgate can use (mode 0700), for the proxy's socket and each spawn's bwrap arguments file. */
  readonly runtimeDir: string;
  /** Where to look for `bwrap` and `socat`. Default `process.env.PATH`. */
  readonly path?: string;
  /**
   * Who commands run as: `null`, the server's own uid (refused when that is
   * root: a command must never be uid 0 to the kernel). Default `null`.
   */
  readonly identity?: SandboxIdentity | null;
  /** Per-terminal limits. Default {@link DEFAULT_SANDBOX_LIMITS}. */
  readonly limits?: SandboxLimits;
  /**
   * Enforce the limits with a cgroup per terminal where one can be made
   * ({@link TerminalCgroups.detect}); `false`: rlimits only. Default `true`.
   */
  readonly cgroups?: boolean;
}

/** The layers in force, one line each, for the server-start record. */
export interface SandboxLayers {
  readonly identity: string;
  readonly keyring: string;
  readonly filter: string;
  readonly limits: string;
}

/** The kernel layers a started sandbox applies to every command (see `BubblewrapSandbox.start`). */
interface KernelLayers {
  readonly identity: SandboxIdentity | null;
  /** The launcher's interpreter (see `perl-launcher.ts`), first of the chain. */
  readonly perl: string;
  /** A cgroup per terminal, or `null` (rlimits only). */
  readonly cgroups: TerminalCgroups | null;
  readonly limits: SandboxLimits;
  /** Inside bwrap, before the command: RLIMIT_NPROC when no pids cgroup bounds the terminal, else nothing. */
  readonly inner: readonly string[];
  readonly filter: SeccompFilter;
  readonly confinement: KernelConfinement;
  readonly layers: SandboxLayers;
}

/** The filter's descriptor in the spawned chain: the first one after stdin, stdout and stderr. */
const SECCOMP_FD = 3;

/**
 * Confines commands with bubblewrap (`bwrap`), the tool Flatpak, Codex and
 * Claude Code's sandbox runtime build on.
 *
 * `start` checks that bubblewrap runs here (installed, user namespaces
 * allowed) and, unless the network is `all`, creates the one network
 * namespace that every terminal of this server shares: loopback only, so a
 * dev server in one terminal answers a client in another, while the host's
 * own loopback services stay out of reach. With an allowlist, a `socat`
 * relay inside that namespace forwards `127.0.0.1:3128` to
 * {@link HttpAllowlistProxy} on a Unix socket outside it.
 *
 * Failing closed: `start` throws {@link SandboxUnavailableError} with the
 * reason and the fix; once started, a spawn whose profile cannot be
 * enforced (no profile, the namespace ended) is rejected with `ESANDBOX`
 * and nothing runs.
 */
export class BubblewrapSandbox {
  readonly #bwrap: string;
  readonly #holder: NamespaceHolder | null;
  readonly #proxy: HttpAllowlistProxy | null;
  readonly #kernel: KernelLayers;
  readonly #runtimeDir: string;
  #closed = false;
  #fail: (reason: string) => void = () => {};
  /**
   * Resolves, once, with the reason when a part the sandbox cannot work
   * without ended while it was open (the namespace holder or the relay it
   * runs was killed, the proxy stopped listening); never while `close`
   * runs. Every later spawn is refused (`ESANDBOX`) either way; the owner
   * should stop the server cleanly on it.
   */
  readonly failed: Promise<string> = new Promise((resolve) => {
    this.#fail = resolve;
  });

  private constructor(
    bwrap: string,
    runtimeDir: string,
    holder: NamespaceHolder | null,
    proxy: HttpAllowlistProxy | null,
    kernel: KernelLayers,
  ) {
    this.#runtimeDir = runtimeDir;
    this.#bwrap = bwrap;
    this.#holder = holder;
    this.#proxy = proxy;
    const fail = (reason: string): void => {
      if (!this.#closed) this.#fail(reason);
    };
    holder?.onExit((how) => fail(`the sandbox's shared network namespace ended (its holder ${how})`));
    proxy?.onError((error) => fail(`the sandbox's network proxy failed: ${error.message}`));
    this.#kernel = kernel;
  }

  /** The kernel layers in force for every command. */
  get layers(): SandboxLayers {
    return this.#kernel.layers;
  }

  /**
   * Checks that bubblewrap runs here (installed, user namespaces allowed) by
   * starting a minimal sandbox, and resolves with its path. Throws
   * {@link SandboxUnavailableError} with the fix otherwise. `start` does it too.
   */
  static async check(path: string = process.env.PATH ?? ''): Promise<string> {
    const bwrap = findProgram('bwrap', path, 'bubblewrap');
    await probe(bwrap);
    return bwrap;
  }

  /**
   * Also sets up the kernel layers, failing closed (SandboxUnavailableError
   * naming the fix) when one cannot be: the identity (refused as root
   * without one), the syscall filter (compiled here, once, into
   * `runtimeDir`), the keyring and the limits; then runs `true` once
   * through the complete chain every command takes.
   */
  static async start(options: BubblewrapSandboxOptions): Promise<BubblewrapSandbox> {
    const path = options.path ?? process.env.PATH ?? '';
    const bwrap = await BubblewrapSandbox.check(path);
    // Every program first, so that a missing one is named before anything runs.
    const socat = typeof options.network === 'object' ? findProgram('socat', path, 'socat') : null;
    const kernel = kernelLayers(options);
    if (options.network === 'all') {
      await probeChain(bwrap, kernel, null);
      return new BubblewrapSandbox(bwrap, options.runtimeDir, null, null, kernel);
    }
    let proxy: HttpAllowlistProxy | null = null;
    let relay: string[] | null = null;
    if (typeof options.network === 'object' && socat !== null) {
      const socketPath = join(options.runtimeDir, 'proxy.sock');
      proxy = await HttpAllowlistProxy.listen({
        socketPath,
        allowlist: new HostAllowlist(options.network.allow),
        onRefused: options.network.onRefused,
        ...(options.network.onAllowed !== undefined && { onAllowed: options.network.onAllowed }),
      });
      relay = [
        socat,
        // socat copies 8 KiB per read by default, which caps a download far below the proxy's pace.
        '-b',
        '262144',
        // A child whose one side ended lingers -t seconds (0.5 s by default) before it exits, holding a
        // max-children slot: under a flood of connections the proxy ends, that kept the relay from accepting.
        '-t',
        '0.05',
        // max-children bounds the relay processes a flood of connections can start on the host. It is
        // above what one terminal can hold at the proxy (its share plus every pending connection), so
        // the proxy's fair share binds first and the relay keeps accepting; the backlog holds a burst.
        `TCP-LISTEN:${SANDBOX_PROXY_PORT},bind=127.0.0.1,fork,reuseaddr,backlog=${RELAY_BACKLOG},max-children=${RELAY_CHILDREN}`,
        `UNIX-CONNECT:${socketPath}`,
      ];
    }
    try {
      if (proxy !== null && kernel.identity !== null)
        allowSocket(join(options.runtimeDir, 'proxy.sock'), kernel.identity);
      // The holder runs as the commands' identity: they can enter only a user namespace of their own uid.
      const holder = await NamespaceHolder.start(
        kernel.identity === null
          ? [bwrap]
          : launcherArgv(kernel.perl, { identity: kernel.identity }, [bwrap]),
        relay ?? ['sleep', 'infinity'],
      );
      const inotify = inotifyBounds();
      try {
        await probeChain(bwrap, kernel, holder, inotify);
      } catch (error) {
        holder.close();
        throw error;
      }
      const bounded: KernelLayers = {
        ...kernel,
        layers: {
          ...kernel.layers,
          limits: `${kernel.layers.limits}; inotify: ${inotify.instances} instances and ${inotify.watches} watches for all terminals together (the shared user namespace's max_inotify_*)`,
        },
      };
      return new BubblewrapSandbox(bwrap, options.runtimeDir, holder, proxy, bounded);
    } catch (error) {
      await proxy?.close();
      throw error;
    }
  }

  /** A spawner that runs every request of `inner` inside this sandbox. */
  spawner(inner: ProcessSpawner): ProcessSpawner {
    return { spawn: (request) => this.#spawn(inner, request) };
  }

  /** Ends the shared network namespace and the proxy. Terminals must have ended first. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#holder?.close();
    await this.#proxy?.close();
  }

  async #spawn(inner: ProcessSpawner, request: SpawnRequest): Promise<SpawnedProcess> {
    const profile = request.sandbox;
    if (profile === undefined) throw sandboxError('the request carries no sandbox profile');
    if (this.#closed) throw sandboxError('the sandbox was closed');
    let namespaces: LaunchSteps['namespaces'];
    if (profile.network !== 'all') {
      if (this.#holder === null) {
        throw sandboxError(
          `the profile needs network "${profile.network}" but the sandbox shares the host's`,
        );
      }
      if (profile.network === 'proxy' && this.#proxy === null) {
        throw sandboxError('the profile needs the network proxy, which this sandbox did not start');
      }
      namespaces = this.#holder.namespaces();
    }
    // bwrap reports a missing program only after it started; keep the port's ENOENT contract.
    assertExecutable(request);
    const env: Record<string, string> = { ...request.env };
    if (profile.filesystem.tmp !== null) env.TMPDIR = '/tmp';
    let credential: string | null = null;
    if (profile.network === 'proxy' && this.#proxy !== null) {
      credential = request.terminalId ?? `spawn-${randomUUID()}`;
      Object.assign(env, proxyEnv(credential, this.#proxy.issue(credential)));
    }
    const revoke = (): void => {
      if (credential !== null) this.#proxy?.revoke(credential);
    };
    if (this.#kernel.identity !== null) trustRepositories(env);
    const kernel = this.#kernel;
    // The mounts reach bwrap through `--args 4` (bubblewrap >= 0.3), not the command line: however
    // many the profile has, no E2BIG, and argv stays short. The file is in the runtime directory
    // (hidden from every command), opened as fd 4 by the launcher, first in the chain and still as
    // the server's uid, and unlinked before bwrap starts; bwrap closes that descriptor after reading
    // it. fd 3 is the syscall filter (`--seccomp 3`), opened anew per command: bwrap reads it to its end.
    const args = bubblewrapArguments(coverable(profile, kernel.identity), request.cwd, kernel.confinement);
    if (args.at(-1) !== '--') throw sandboxError('bubblewrapArguments must end with --');
    const argsFile = join(this.#runtimeDir, `args-${randomUUID()}`);
    await writeFile(argsFile, `${args.slice(0, -1).join('\0')}\0`, { mode: 0o600, flag: 'wx' });
    let cgroup: TerminalCgroup | null = null;
    let filterFd: number | null = null;
    let spawned: Awaited<ReturnType<ProcessSpawner['spawn']>>;
    try {
      cgroup = kernel.cgroups?.create(cgroupLimits(kernel.limits)) ?? null;
      filterFd = openSync(kernel.filter.path, 'r');
      const launched = launch(
        kernel.perl,
        kernelSteps(kernel, { argsFile, cgroup, namespaces }),
        [this.#bwrap, '--args', '4', '--', ...kernel.inner, ...request.argv],
        env,
      );
      spawned = await inner.spawn({
        argv: launched.argv,
        cwd: request.cwd,
        env: launched.env,
        extraFds: [filterFd],
      });
    } catch (error) {
      revoke();
      await unlink(argsFile).catch(() => {});
      cgroup?.remove();
      throw error;
    } finally {
      if (filterFd !== null) closeSync(filterFd);
    }
    // The credential ends with the command's pid namespace: nothing that could send it is left.
    void spawned.exited.finally(() => {
      revoke();
      cgroup?.remove();
      return unlink(argsFile).catch(() => {});
    });
    // The command's pid namespace ends with bwrap: nothing is left once it exited.
    return {
      pid: spawned.pid,
      output: spawned.output,
      exited: spawned.exited,
      signalGroup: (signal) => spawned.signalGroup(signal),
      groupAlive: () => spawned.groupAlive(),
      diesWithLeader: true,
    };
  }
}

/**
 * The relay's limits (socat): see docs/HOSTILE.md, "Fair share". Eight times what one terminal can
 * hold at the proxy (its share plus every pending connection): the proxy's limits bind first, and the
 * children a flood's short-lived connections keep for a moment do not fill the relay (at twice, the
 * flood's churn filled it and another terminal's request waited in the accept queue).
 */
const RELAY_CHILDREN = 8 * (MAX_PENDING_CONNECTIONS + MAX_CONNECTIONS_PER_TERMINAL);
const RELAY_BACKLOG = 512;

const NO_PROXY = 'localhost,127.0.0.1,::1';
/**
 * The proxy URL of one terminal, with its own credential (the proxy names
 * the terminal from it); both spellings: curl and Python read the
 * lower-case ones, npm and Go either. Another terminal cannot read it: each
 * has its own pid namespace, so no other terminal's /proc/<pid>/environ.
 */
function proxyEnv(terminalId: string, secret: string): Record<string, string> {
  const url = `http://${encodeURIComponent(terminalId)}:${encodeURIComponent(secret)}@127.0.0.1:${SANDBOX_PROXY_PORT}`;
  return {
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    ALL_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    all_proxy: url,
    NO_PROXY,
    no_proxy: NO_PROXY,
  };
}

/**
 * The process that keeps the shared network namespace alive: bwrap with a
 * new user and network namespace running the relay (or `sleep`). Commands
 * enter its namespaces (the launcher's `setns`) before their own bwrap starts.
 */
class NamespaceHolder {
  #exited = false;

  private constructor(
    private readonly child: ChildProcess,
    private readonly pid: number,
    private readonly netInode: number,
  ) {
    child.once('exit', () => {
      this.#exited = true;
    });
    // A late spawn error (the child is gone) is an exit too; never an unhandled 'error'.
    child.on('error', () => {
      this.#exited = true;
    });
  }

  /** Calls `listener` once when the holder process ends. */
  onExit(listener: (how: string) => void): void {
    if (this.#exited) {
      listener('had exited');
      return;
    }
    this.child.once('exit', (code, signal) =>
      listener(signal !== null ? `was killed by ${signal}` : `exited with code ${code}`),
    );
  }

  /** `bwrap`: its argv up to the program itself (the launcher that drops to the commands' uid, then bwrap). */
  static async start(bwrap: readonly string[], command: readonly string[]): Promise<NamespaceHolder> {
    const [program, ...prefixArgs] = bwrap;
    const child = spawn(
      program!,
      [
        ...prefixArgs,
        '--die-with-parent',
        '--unshare-user',
        '--unshare-net',
        '--cap-drop',
        'ALL',
        '--ro-bind',
        '/',
        '/',
        // No --dev: for an unprivileged user, bwrap then nests a second user namespace, and
        // setns into the inner one may not join the network namespace the outer one owns.
        '--info-fd',
        '3',
        '--',
        ...command,
      ],
      { stdio: ['ignore', 'ignore', 'pipe', 'pipe'] },
    );
    const info = await readInfo(child);
    const holder = new NamespaceHolder(child, info.pid, info.netInode);
    if (command[0] !== 'sleep') await holder.#waitForListener(SANDBOX_PROXY_PORT);
    return holder;
  }

  /** The namespaces to enter (the launcher's `setns`); throws `ESANDBOX` once the holder is gone. */
  namespaces(): { user: string; net: string } {
    const net = `/proc/${this.pid}/ns/net`;
    let inode: number | null = null;
    try {
      inode = statSync(net).ino;
    } catch {
      inode = null;
    }
    if (this.#exited || inode !== this.netInode) {
      throw sandboxError("the sandbox's shared network namespace ended; restart termgate");
    }
    return { user: `/proc/${this.pid}/ns/user`, net };
  }

  close(): void {
    if (!this.#exited) this.child.kill('SIGKILL');
  }

  /** Resolves once something listens on 127.0.0.1:`port` in the namespace (read from its /proc/net/tcp). */
  async #waitForListener(port: number): Promise<void> {
    const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
    for (let i = 0; i < 300; i++) {
      if (this.#exited) break;
      let table = '';
      try {
        table = readFileSync(`/proc/${this.pid}/net/tcp`, 'latin1');
      } catch {
        table = '';
      }
      if (table.split('\n').some((line) => line.includes(` ${local} `) && / 0A /.test(line))) return;
      await new Promise((r) => setTimeout(r, 10));
    }
    this.close();
    throw new SandboxUnavailableError(
      'the network proxy relay (socat) did not start in the sandbox',
      'check that socat runs here (apt-get install socat)',
    );
  }
}

function readInfo(child: ChildProcess): Promise<{ pid: number; netInode: number }> {
  return new Promise((resolveInfo, reject) => {
    let text = '';
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const info = child.stdio[3] as NodeJS.ReadableStream | null;
    const fail = (why: string): void => {
      child.kill('SIGKILL');
      reject(
        new SandboxUnavailableError(
          `bubblewrap could not create the shared network namespace: ${why}`,
          USERNS_REMEDY,
        ),
      );
    };
    child.once('error', (error) => fail(error.message));
    child.once('exit', (code) => fail(stderr.trim() || `bwrap exited with code ${code}`));
    // The holder's pipes are the server's: an error on one is its end, never an unhandled 'error'.
    info?.on('error', () => {});
    child.stderr?.on('error', () => {});
    info?.setEncoding('utf8');
    info?.on('data', (chunk: string) => {
      text += chunk;
      try {
        const parsed = JSON.parse(text) as { 'child-pid'?: unknown; 'net-namespace'?: unknown };
        const pid = parsed['child-pid'];
        const netInode = parsed['net-namespace'];
        if (typeof pid === 'number' && typeof netInode === 'number') {
          child.removeAllListeners('exit');
          // From now on its stderr is drained, not kept: a relay that logs must never block on a full pipe.
          child.stderr?.removeAllListeners('data').resume();
          resolveInfo({ pid, netInode });
        }
      } catch {
        // Not complete yet.
      }
    });
  });
}

const USERNS_REMEDY =
  'bubblewrap needs unprivileged user namespaces: on Debian/Ubuntu set `sysctl kernel.unprivileged_userns_clone=1`; ' +
  'on Ubuntu 24.04+ also `sysctl kernel.apparmor_restrict_unprivileged_userns=0` (or an AppArmor profile for bwrap); ' +
  "in Docker, run the container with `--security-opt seccomp=unconfined` (Docker's default seccomp profile refuses them); " +
  'or set `sandbox.mode: off` in the policy to run unconfined';

/** Nothing writable, nothing hidden, `/tmp` left read-only: the smallest profile a command can get. */
const PROBE_PROFILE: SandboxProfile = {
  filesystem: { writable: [], readOnly: [], hiddenDirectories: [], hiddenFiles: [], tmp: null },
  network: 'all',
};

/**
 * Runs `true` once in a sandbox built by the same `bubblewrapArguments` as
 * every command (the same namespaces, capabilities and base mounts), so that a
 * machine that cannot run a command's sandbox is known before anything else runs.
 */
function probe(bwrap: string): Promise<void> {
  return new Promise((resolveProbe, reject) => {
    execFile(
      bwrap,
      [...bubblewrapArguments(PROBE_PROFILE, '/'), 'true'],
      { timeout: 10_000 },
      (error, _stdout, stderr) => {
        if (error === null) resolveProbe();
        else {
          reject(
            new SandboxUnavailableError(
              `bubblewrap cannot create a sandbox here: ${String(stderr).trim() || error.message}`,
              USERNS_REMEDY,
            ),
          );
        }
      },
    );
  });
}

// ---- Kernel layers: identity, keyring, syscall filter, limits (set up once per server start). ----

const SYSTEM_PATH = '/usr/bin:/bin:/usr/sbin:/sbin';

function kernelLayers(options: BubblewrapSandboxOptions): KernelLayers {
  const identity = options.identity ?? null;
  if (identity === null && process.getuid?.() === 0) {
    throw new SandboxUnavailableError(
      'termgate serves as root and no unprivileged identity was given: sandboxed commands would be uid 0 to the kernel',
      'create the sandbox user (node scripts/ensure-system-packages.mjs --runtime) or name one in sandbox.user',
    );
  }
  const limits = options.limits ?? DEFAULT_SANDBOX_LIMITS;
  const perl = findProgram('perl', SYSTEM_PATH, 'perl-base');
  const cgroups = options.cgroups === false ? null : TerminalCgroups.detect();
  if (cgroups !== null && limits.totalMemoryMiB !== undefined) {
    try {
      cgroups.capTotal(limits.totalMemoryMiB * 1024 * 1024);
    } catch (error) {
      throw new SandboxUnavailableError(
        `the memory limit of all terminals together cannot be set: ${(error as Error).message}`,
        'check that the cgroup file system is writable for termgate',
      );
    }
  }
  const prlimit = cgroups === null ? findProgram('prlimit', SYSTEM_PATH, 'util-linux') : null;
  const filter = compileSeccompFilter(join(options.runtimeDir, 'seccomp.bpf'));
  return {
    identity,
    perl,
    cgroups,
    limits,
    inner: prlimit === null ? [] : rlimitArguments(prlimit, limits),
    filter,
    confinement: { seccompFd: SECCOMP_FD, disableUserns: true, tmpBytes: limits.tmpMiB * 1024 * 1024 },
    layers: {
      identity:
        identity === null
          ? `the server's own uid ${process.getuid?.() ?? '?'} (not root)`
          : `user ${identity.user} (uid ${identity.uid}, gid ${identity.gid}, no supplementary groups)`,
      keyring: 'a fresh, empty session keyring per command',
      filter: `seccomp (libseccomp), native ABI only; refused: ${filter.refused.join(', ')}; no nested user namespaces (--disable-userns)`,
      limits: describeLimits(
        limits,
        cgroups === null
          ? null
          : `${cgroups.describe(cgroupLimits(limits))}${limits.totalMemoryMiB === undefined ? '' : `; ${limits.totalMemoryMiB} MiB for all terminals together`}`,
      ),
    },
  };
}

/** What the launcher does for every command (see `perl-launcher.ts`). */
function kernelSteps(
  kernel: KernelLayers,
  own: { argsFile?: string; cgroup: TerminalCgroup | null; namespaces: LaunchSteps['namespaces'] },
): LaunchSteps {
  return {
    ...(own.argsFile !== undefined && { argsFile: own.argsFile }),
    ...(own.cgroup !== null && { cgroups: own.cgroup.directories }),
    dataBytes: dataBytes(kernel.limits),
    ...(kernel.identity !== null && { identity: kernel.identity }),
    ...(own.namespaces !== undefined && { namespaces: own.namespaces }),
    keyring: true,
  };
}

/**
 * inotify bounds for all the terminals of one server together, set in the
 * user namespace they share: half of what the kernel allows the uid in the
 * initial namespace (`fs.inotify.max_user_instances`, 128 by default, and
 * `max_user_watches`), so that the commands can never take what the
 * person's own editors and watchers of that uid need.
 */
function inotifyBounds(): { instances: number; watches: number } {
  const half = (file: string, fallback: number): number => {
    let value = Number.NaN;
    try {
      value = Number.parseInt(readFileSync(`/proc/sys/fs/inotify/${file}`, 'utf8').trim(), 10);
    } catch {
      // no inotify sysctl here: the kernel's defaults
    }
    return Math.max(1, Math.floor((Number.isSafeInteger(value) && value > 0 ? value : fallback) / 2));
  };
  return { instances: half('max_user_instances', 128), watches: half('max_user_watches', 8192) };
}

function cgroupLimits(limits: SandboxLimits): { memoryBytes: number; pids: number } {
  return { memoryBytes: limits.memoryMiB * 1024 * 1024, pids: limits.processes };
}

/**
 * Runs `true` through the whole chain a command takes (the launcher: a
 * terminal cgroup, rlimits, identity, the shared namespaces when there are,
 * keyring; then bwrap with the filter and a private /tmp), so that a layer
 * the machine cannot apply stops the start instead of every command.
 */
function probeChain(
  bwrap: string,
  kernel: KernelLayers,
  holder: NamespaceHolder | null,
  inotify?: LaunchSteps['inotify'],
): Promise<void> {
  const profile: SandboxProfile = {
    ...PROBE_PROFILE,
    filesystem: { ...PROBE_PROFILE.filesystem, tmp: '/tmp' },
  };
  let cgroup: TerminalCgroup | null = null;
  let argv: string[];
  try {
    cgroup = kernel.cgroups?.create(cgroupLimits(kernel.limits)) ?? null;
    const steps = kernelSteps(kernel, { cgroup, namespaces: holder?.namespaces() });
    // The probe is the first to enter the shared user namespace: it sets the bounds every
    // command's nested namespace is then charged against (once, for the server's life).
    argv = launcherArgv(kernel.perl, inotify === undefined ? steps : { ...steps, inotify }, [
      bwrap,
      ...bubblewrapArguments(profile, '/', kernel.confinement),
      ...kernel.inner,
      'true',
    ]);
  } catch (error) {
    cgroup?.remove();
    return Promise.reject(
      new SandboxUnavailableError(
        `the sandbox's kernel layers cannot be applied here: ${(error as Error).message}`,
        'check that the cgroup file system is writable, or run on x86-64 or arm64',
      ),
    );
  }
  const filterFd = openSync(kernel.filter.path, 'r');
  return new Promise<void>((resolveProbe, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe', filterFd] });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    const fail = (why: string): void =>
      reject(
        new SandboxUnavailableError(
          `the sandbox's kernel layers cannot be applied here: ${why}`,
          'check that the sandbox user exists and can run bwrap, and that python3-seccomp, util-linux and perl are installed',
        ),
      );
    child.once('error', (error) => {
      clearTimeout(timer);
      fail(error.message);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolveProbe();
      else fail(stderr.trim() || `exit ${code ?? signal}`);
    });
  }).finally(() => {
    closeSync(filterFd);
    cgroup?.remove();
  });
}

/**
 * The profile without the covers (hidden paths, placeholders) that the
 * identity cannot reach by DAC anyway: bwrap runs as it and could not
 * create them (a host socket in another user's 0700 directory, say).
 */
function coverable(profile: SandboxProfile, identity: SandboxIdentity | null): SandboxProfile {
  // Without an identity, bwrap runs as the server's own (non-root) uid.
  const who = identity ?? { uid: process.getuid?.() ?? -1 };
  const keep = (paths: readonly string[]): string[] => paths.filter((path) => !unreachableBy(who, path));
  const fs = profile.filesystem;
  return {
    ...profile,
    filesystem: {
      ...fs,
      hiddenDirectories: keep(fs.hiddenDirectories),
      hiddenFiles: keep(fs.hiddenFiles),
      ...(fs.placeholderDirectories !== undefined && {
        placeholderDirectories: keep(fs.placeholderDirectories),
      }),
      ...(fs.placeholderFiles !== undefined && { placeholderFiles: keep(fs.placeholderFiles) }),
    },
  };
}

/** The proxy's socket, connectable by the identity (the relay runs as it). */
function allowSocket(socketPath: string, identity: SandboxIdentity): void {
  try {
    execFileSync('setfacl', ['-m', `u:${identity.uid}:rw`, '--', socketPath], {
      stdio: 'ignore',
      env: { PATH: SYSTEM_PATH },
    });
    for (
      let dir = dirname(socketPath);
      dir !== dirname(dir) && !(statSync(dir).mode & 0o001);
      dir = dirname(dir)
    ) {
      execFileSync('setfacl', ['-m', `u:${identity.uid}:x`, '--', dir], {
        stdio: 'ignore',
        env: { PATH: SYSTEM_PATH },
      });
    }
  } catch (error) {
    throw new SandboxUnavailableError(
      `cannot let the sandbox user reach the network proxy's socket: ${(error as Error).message}`,
      'install the Debian/Ubuntu package "acl" (apt-get install acl)',
    );
  }
}

/**
 * Under a dedicated identity the workspace's repositories belong to another
 * user, which git refuses ("dubious ownership") unless told they are safe.
 * They are the person's own, their git dirs read-only in the sandbox: tell
 * git so, through its command-line configuration in the environment, the
 * one place besides system and global config that `safe.directory` is read from.
 */
function trustRepositories(env: Record<string, string>): void {
  const count = Number.parseInt(env.GIT_CONFIG_COUNT ?? '0', 10);
  const n = Number.isInteger(count) && count >= 0 ? count : 0;
  env.GIT_CONFIG_COUNT = String(n + 1);
  env[`GIT_CONFIG_KEY_${n}`] = 'safe.directory';
  env[`GIT_CONFIG_VALUE_${n}`] = '*';
}

function findProgram(name: string, path: string, debianPackage: string): string {
  // Only absolute PATH entries: the sandbox's own tools must not come from the cwd.
  const found = findOnPath(name, path.split(delimiter).filter(isAbsolute).join(delimiter));
  if (found !== null) return found;
  throw new SandboxUnavailableError(
    `${name} was not found on PATH`,
    `install the Debian/Ubuntu package "${debianPackage}" (apt-get install ${debianPackage}), or set \`sandbox.mode: off\` in the policy to run unconfined`,
  );
}

function sandboxError(message: string): Error {
  return Object.assign(new Error(message), { code: 'ESANDBOX' });
}
