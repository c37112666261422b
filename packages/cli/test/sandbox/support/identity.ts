/**
 * Serving a sandbox world as root (the tests' own identity, when they run
 * as root) and as an unprivileged user (nobody via util-linux `setpriv`
 * when the tests run as root; the tests' own user otherwise), and running
 * host-side helpers (daemons, git) as that same identity.
 */
import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { chmodSync, readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { SERVER_BIN, WireServer } from '../../e2e/support/wire-server.js';
import type { SandboxWorld } from './sandbox-fixture.js';

export const AS_ROOT = process.getuid?.() === 0;
const NOBODY = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--'];

export type Identity = 'root' | 'unprivileged';

/** The identities this run can test: both as root, the tests' own user otherwise. */
export const IDENTITIES: readonly Identity[] = AS_ROOT ? ['root', 'unprivileged'] : ['unprivileged'];

/** The command prefix that runs a host program as `identity`. */
export function asIdentity(identity: Identity): readonly string[] {
  return identity === 'unprivileged' && AS_ROOT ? NOBODY : [];
}

/** Opens the world to the unprivileged user: every directory 0777, every file 0666 (mode bits only). */
export function openWorld(world: SandboxWorld): void {
  const walk = (dir: string): void => {
    chmodSync(dir, 0o777);
    for (const entry of readdirSync(dir)) {
      const p = path.join(dir, entry);
      const stat = statSync(p, { throwIfNoEntry: false });
      if (stat?.isDirectory()) walk(p);
      else if (stat?.isFile()) chmodSync(p, 0o666);
    }
  };
  walk(world.root);
}

/** `termgate serve` in the world's workspace as `identity`. */
export function serveAs(world: SandboxWorld, identity: Identity, env: NodeJS.ProcessEnv = {}): WireServer {
  const args = ['--policy', world.policyPath, '--audit', world.auditPath];
  const wrap = asIdentity(identity);
  if (wrap.length > 0) {
    openWorld(world);
    const readable = spawnSync(wrap[0]!, [...wrap.slice(1), 'test', '-r', SERVER_BIN]);
    if (readable.status !== 0) {
      throw new Error(
        `user nobody cannot read ${SERVER_BIN}: this suite needs the checkout readable by other users`,
      );
    }
  }
  return WireServer.start(args, {
    cwd: world.workspace,
    env: { ...process.env, HOME: world.home, ...env },
    wrap,
  });
}

/** Runs `argv` on the host as `identity`, with `env` over the tests' environment. */
export function hostRun(
  identity: Identity,
  argv: readonly string[],
  options: { env?: NodeJS.ProcessEnv; input?: string; cwd?: string } = {},
): SpawnSyncReturns<string> {
  const full = [...asIdentity(identity), ...argv];
  return spawnSync(full[0]!, full.slice(1), {
    encoding: 'utf8',
    env: { ...process.env, ...options.env },
    input: options.input ?? '',
    cwd: options.cwd,
    timeout: 30_000,
  });
}
