import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { SandboxUnavailableError, sandboxError } from './sandbox-unavailable-error.js';

/** The loopback port of the proxy relay inside the sandboxes' network namespace. */
export const SANDBOX_PROXY_PORT = 3128;

/**
 * The process that keeps the shared network namespace alive: bwrap with a
 * new user and network namespace running the relay (or `sleep`). Commands
 * enter its namespaces (the launcher's `setns`) before their own bwrap starts.
 */
export class NamespaceHolder {
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

/** The fix to name when bubblewrap cannot make its namespaces here. */
export const USERNS_REMEDY =
  'bubblewrap needs unprivileged user namespaces: on Debian/Ubuntu set `sysctl kernel.unprivileged_userns_clone=1`; ' +
  'on Ubuntu 24.04+ also `sysctl kernel.apparmor_restrict_unprivileged_userns=0` (or an AppArmor profile for bwrap); ' +
  "in Docker, run the container with `--security-opt seccomp=unconfined` (Docker's default seccomp profile refuses them); " +
  'or set `sandbox.mode: off` in the policy to run unconfined';
