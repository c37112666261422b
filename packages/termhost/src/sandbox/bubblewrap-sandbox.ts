import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { closeSync, lstatSync, openSync, statSync } from 'node:fs';
import { unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ProcessSpawner, SpawnedProcess, SpawnRequest } from '../ports/process-spawner.js';
import type { SandboxProfile } from '../sandbox-profile.js';
import { bubblewrapArguments } from './bubblewrap-arguments.js';
import { MAX_CONNECTIONS_PER_TERMINAL, MAX_PENDING_CONNECTIONS } from './connection-share.js';
import { assertExecutable } from './executable-check.js';
import { HostAllowlist } from './host-allowlist.js';
import {
  HttpAllowlistProxy,
  type ProxiedConnection,
  type RefusedConnection,
} from './http-allowlist-proxy.js';
import {
  cgroupLimits,
  findProgram,
  inotifyBounds,
  type KernelLayers,
  kernelLayers,
  kernelSteps,
  type SandboxLayers,
  SYSTEM_PATH,
} from './kernel-layers.js';
import { NamespaceHolder, SANDBOX_PROXY_PORT } from './namespace-holder.js';
import { type LaunchSteps, launch, launcherArgv } from './perl-launcher.js';
import { proxyEnvironment } from './proxy-credentials.js';
import { type SandboxIdentity, unreachableBy } from './sandbox-identity.js';
import type { SandboxLimits } from './sandbox-limits.js';
import { probe, probeChain } from './sandbox-probe.js';
import { SandboxUnavailableError, sandboxError } from './sandbox-unavailable-error.js';
import type { TerminalCgroup } from './terminal-cgroups.js';

export type { SandboxLayers } from './kernel-layers.js';
export { SANDBOX_PROXY_PORT } from './namespace-holder.js';

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
      // Another terminal cannot read it: each has its own pid namespace, so no other terminal's /proc/<pid>/environ.
      Object.assign(env, proxyEnvironment(credential, this.#proxy.issue(credential), SANDBOX_PROXY_PORT));
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

/**
 * The profile without the covers (hidden paths, placeholders) that the
 * identity cannot reach by DAC anyway: bwrap runs as it and could not
 * create them (a host socket in another user's 0700 directory, say).
 * Also without a hidden path that is gone by now where the view is not
 * writable (a host socket unlinked since the profile was computed, during an
 * approval say): bwrap would fail to create its mount point in the
 * read-only view, and there is nothing left to hide. Placeholders stay:
 * they exist to cover what does not exist yet.
 */
function coverable(profile: SandboxProfile, identity: SandboxIdentity | null): SandboxProfile {
  // Without an identity, bwrap runs as the server's own (non-root) uid.
  const who = identity ?? { uid: process.getuid?.() ?? -1 };
  const keep = (paths: readonly string[]): string[] => paths.filter((path) => !unreachableBy(who, path));
  const fs = profile.filesystem;
  const inside = (path: string, roots: readonly string[]): boolean =>
    roots.some((root) => path === root || path.startsWith(root.endsWith('/') ? root : `${root}/`));
  const writable = (path: string): boolean => inside(path, fs.writable) && !inside(path, fs.readOnly);
  const present = (paths: readonly string[]): string[] =>
    paths.filter((path) => writable(path) || lstatSync(path, { throwIfNoEntry: false }) !== undefined);
  return {
    ...profile,
    filesystem: {
      ...fs,
      hiddenDirectories: keep(present(fs.hiddenDirectories)),
      hiddenFiles: keep(present(fs.hiddenFiles)),
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
export function trustRepositories(env: Record<string, string>): void {
  const count = Number.parseInt(env.GIT_CONFIG_COUNT ?? '0', 10);
  const n = Number.isInteger(count) && count >= 0 ? count : 0;
  env.GIT_CONFIG_COUNT = String(n + 1);
  env[`GIT_CONFIG_KEY_${n}`] = 'safe.directory';
  env[`GIT_CONFIG_VALUE_${n}`] = '*';
}
