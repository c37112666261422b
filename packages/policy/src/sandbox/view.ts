import { lstatSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { isInside, realpathOrNull } from '../policy-file/policy-paths.js';
import type { SandboxPolicy } from '../policy-file/policy-types.js';
import { boundSocketPaths } from './host-sockets.js';
import { SYSTEM_SECRETS } from './view-defaults.js';

/** The allowlisted part of a profile (see `SandboxProfile`). */
export interface View {
  /** Existing directories shown empty but for what the view names inside them. */
  readonly emptied: string[];
  /** Existing paths inside the emptied trees shown read-only. */
  readonly readable: string[];
  /** Allowed host sockets, bound in. */
  readonly sockets: string[];
  /** Secret system files and host sockets to cover. */
  readonly hiddenDirectories: string[];
  readonly hiddenFiles: string[];
}

/**
 * Computes the view for one command: the policy's allowlisted trees (those
 * that exist and are not themselves inside a writable directory, where the
 * writable directory wins), the readable paths that exist inside them, the
 * target of `/etc/resolv.conf` when it lies inside one (name resolution
 * with `network: all` needs it; it is a plain file), the system's secret
 * files, and every host socket a command could otherwise reach: each path
 * in the kernel's socket table that the view shows (outside the emptied
 * trees and the private `/tmp`, or inside a readable or writable path),
 * unless `unixSockets.allow` names it, is covered with an empty file.
 *
 * `writable` is what the profile binds read-write; `hiddenDirectories` the
 * directories it already covers.
 */
export function viewOf(
  policy: SandboxPolicy,
  writable: readonly string[],
  privateTmp: boolean,
  hiddenDirectories: readonly string[],
): View {
  const inAny = (path: string, dirs: readonly string[]): boolean => dirs.some((d) => isInside(path, d));
  const trees: string[] = [];
  for (const tree of new Set(policy.allowlistedTrees ?? [])) {
    const real = realpathOrNull(tree);
    if (real === null || !isDirectory(real) || inAny(real, writable)) continue;
    trees.push(real);
  }
  const emptied = [...new Set(trees)].filter((t) => !trees.some((o) => o !== t && isInside(t, o)));
  const shown = [...(policy.readable ?? []), ...resolvConfTarget()];
  const readable = [...new Set(shown)].filter(
    (path) => exists(path) && !isSocket(path) && (inAny(path, emptied) || inAny(realOf(path), emptied)),
  );
  const allowed = (policy.unixSockets?.allow ?? []).filter(isSocket);
  const allowedReal = new Set(allowed.map(realOf));
  const hiddenFiles: string[] = [];
  const secretDirectories: string[] = [];
  for (const path of systemSecrets()) (isDirectory(path) ? secretDirectories : hiddenFiles).push(path);
  const through = [...readable, ...readable.map(realOf), ...writable, ...allowed];
  for (const path of boundSocketPaths()) {
    const real = realpathOrNull(path);
    if (real === null || allowedReal.has(real) || !isSocket(real)) continue;
    if (privateTmp && isInside(real, '/tmp')) continue;
    if (inAny(real, emptied) && !inAny(real, through)) continue;
    if (inAny(real, hiddenDirectories) || inAny(real, secretDirectories)) continue;
    hiddenFiles.push(real);
  }
  return { emptied, readable, sockets: allowed, hiddenDirectories: secretDirectories, hiddenFiles };
}

/** The system's secret files that exist (`*` expanded within one name). */
function systemSecrets(): string[] {
  const found: string[] = [];
  for (const pattern of SYSTEM_SECRETS) {
    const name = basename(pattern);
    if (!name.includes('*')) {
      if (exists(pattern)) found.push(pattern);
      continue;
    }
    const glob = new RegExp(`^${name.split('*').map(escapeRegExp).join('[^/]*')}$`);
    let entries: string[] = [];
    try {
      entries = readdirSync(dirname(pattern));
    } catch {
      // No such directory: nothing to hide.
    }
    for (const entry of entries) if (glob.test(entry)) found.push(join(dirname(pattern), entry));
  }
  return found;
}

/** Where `/etc/resolv.conf` leads (systemd-resolved keeps it under /run), when it is a link to a file. */
function resolvConfTarget(): string[] {
  try {
    const link = readlinkSync('/etc/resolv.conf');
    const target = realpathOrNull(resolve('/etc', link));
    return target !== null && statSync(target).isFile() ? [target] : [];
  } catch {
    return [];
  }
}

function realOf(path: string): string {
  return realpathOrNull(path) ?? path;
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

function isDirectory(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}

function isSocket(path: string): boolean {
  try {
    return statSync(path).isSocket();
  } catch {
    return false;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
