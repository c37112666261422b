import { execFile, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import type { SandboxProfile } from '../sandbox-profile.js';
import { bubblewrapArguments } from './bubblewrap-arguments.js';
import { cgroupLimits, type KernelLayers, kernelSteps } from './kernel-layers.js';
import { type NamespaceHolder, USERNS_REMEDY } from './namespace-holder.js';
import { type LaunchSteps, launcherArgv } from './perl-launcher.js';
import { SandboxUnavailableError } from './sandbox-unavailable-error.js';
import type { TerminalCgroup } from './terminal-cgroups.js';

/**
 * The probes that stop a start before anything runs: bubblewrap itself
 * (`probe`, what `BubblewrapSandbox.check` runs), then the complete chain
 * every command takes (`probeChain`).
 */

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
export function probe(bwrap: string): Promise<void> {
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

/**
 * Runs `true` through the whole chain a command takes (the launcher: a
 * terminal cgroup, rlimits, identity, the shared namespaces when there are,
 * keyring; then bwrap with the filter and a private /tmp), so that a layer
 * the machine cannot apply stops the start instead of every command.
 */
export function probeChain(
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
