import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import type { ProcessSpawner, SpawnedProcess, SpawnRequest } from '../../ports/process-spawner.js';
import type { SandboxProfile } from '../../sandbox-profile.js';
import { assertExecutable, findOnPath } from '../executable-check.js';
import { bubblewrapArguments } from './bubblewrap-arguments.js';
import { HostAllowlist } from './host-allowlist.js';
import { HttpAllowlistProxy, type RefusedConnection } from './http-allowlist-proxy.js';
import { SandboxUnavailableError } from './sandbox-unavailable-error.js';

/** The loopback port of the proxy relay inside the sandboxes' network namespace. */
export const SANDBOX_PROXY_PORT = 3128;

export type SandboxNetwork =
  | 'all'
  | 'none'
  | {
      readonly allow: readonly string[];
      /** A connection the proxy refused; for the audit trail. Must not throw. */
      readonly onRefused: (refused: RefusedConnection) => void;
    };

export interface BubblewrapSandboxOptions {
  readonly network: SandboxNetwork;
  /** A directory only termgate can use (mode 0700), for the proxy's socket. */
  readonly runtimeDir: string;
  /** Where to look for `bwrap`, `nsenter` and `socat`. Default `process.env.PATH`. */
  readonly path?: string;
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
  readonly #nsenter: string | null;
  readonly #holder: NamespaceHolder | null;
  readonly #proxy: HttpAllowlistProxy | null;
  #closed = false;

  private constructor(
    bwrap: string,
    nsenter: string | null,
    holder: NamespaceHolder | null,
    proxy: HttpAllowlistProxy | null,
  ) {
    this.#bwrap = bwrap;
    this.#nsenter = nsenter;
    this.#holder = holder;
    this.#proxy = proxy;
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

  static async start(options: BubblewrapSandboxOptions): Promise<BubblewrapSandbox> {
    const path = options.path ?? process.env.PATH ?? '';
    const bwrap = await BubblewrapSandbox.check(path);
    if (options.network === 'all') return new BubblewrapSandbox(bwrap, null, null, null);
    const nsenter = findProgram('nsenter', path, 'util-linux');
    let proxy: HttpAllowlistProxy | null = null;
    let relay: string[] | null = null;
    if (typeof options.network === 'object') {
      const socat = findProgram('socat', path, 'socat');
      const socketPath = join(options.runtimeDir, 'proxy.sock');
      proxy = await HttpAllowlistProxy.listen({
        socketPath,
        allowlist: new HostAllowlist(options.network.allow),
        onRefused: options.network.onRefused,
      });
      relay = [
        socat,
        // socat copies 8 KiB per read by default, which caps a download far below the proxy's pace.
        '-b',
        '262144',
        // max-children bounds the relay processes a flood of connections can start on the host.
        `TCP-LISTEN:${SANDBOX_PROXY_PORT},bind=127.0.0.1,fork,reuseaddr,max-children=64`,
        `UNIX-CONNECT:${socketPath}`,
      ];
    }
    try {
      const holder = await NamespaceHolder.start(bwrap, relay ?? ['sleep', 'infinity']);
      return new BubblewrapSandbox(bwrap, nsenter, holder, proxy);
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
    let prefix: string[] = [];
    if (profile.network !== 'all') {
      if (this.#holder === null || this.#nsenter === null) {
        throw sandboxError(
          `the profile needs network "${profile.network}" but the sandbox shares the host's`,
        );
      }
      if (profile.network === 'proxy' && this.#proxy === null) {
        throw sandboxError('the profile needs the network proxy, which this sandbox did not start');
      }
      prefix = [this.#nsenter, '--preserve-credentials', ...this.#holder.enterArguments(), '--'];
    }
    // bwrap reports a missing program only after it started; keep the port's ENOENT contract.
    assertExecutable(request);
    const env: Record<string, string> = { ...request.env };
    if (profile.filesystem.tmp !== null) env.TMPDIR = '/tmp';
    if (profile.network === 'proxy') Object.assign(env, PROXY_ENV);
    const spawned = await inner.spawn({
      argv: [...prefix, this.#bwrap, ...bubblewrapArguments(profile, request.cwd), ...request.argv],
      cwd: request.cwd,
      env,
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

const PROXY_URL = `http://127.0.0.1:${SANDBOX_PROXY_PORT}`;
const NO_PROXY = 'localhost,127.0.0.1,::1';
/** Both spellings: curl and Python read the lower-case ones, npm and Go either. */
const PROXY_ENV: Readonly<Record<string, string>> = Object.freeze({
  HTTP_PROXY: PROXY_URL,
  HTTPS_PROXY: PROXY_URL,
  ALL_PROXY: PROXY_URL,
  http_proxy: PROXY_URL,
  https_proxy: PROXY_URL,
  all_proxy: PROXY_URL,
  NO_PROXY,
  no_proxy: NO_PROXY,
});

/**
 * The process that keeps the shared network namespace alive: bwrap with a
 * new user and network namespace running the relay (or `sleep`). Commands
 * enter its namespaces with `nsenter` before their own bwrap starts.
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
  }

  static async start(bwrap: string, command: readonly string[]): Promise<NamespaceHolder> {
    const child = spawn(
      bwrap,
      [
        '--die-with-parent',
        '--unshare-user',
        '--unshare-net',
        '--cap-drop',
        'ALL',
        '--ro-bind',
        '/',
        '/',
        // No --dev: for an unprivileged user, bwrap then nests a second user namespace, and
        // nsenter into the inner one may not join the network namespace the outer one owns.
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

  /** `nsenter` options that enter the namespaces; throws `ESANDBOX` once the holder is gone. */
  enterArguments(): string[] {
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
    return [`--user=/proc/${this.pid}/ns/user`, `--net=${net}`];
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
