import type { PolicyLimits, RunLaterPolicy, SandboxPolicy } from '../policy-file/policy-types.js';
import { hostsOutside, intersectHosts } from './host-sets.js';
import { intersectRoots, outside, unite } from './path-sets.js';

/** Something a workspace policy asked for that the managed layer does not grant: the merge ignored it. */
export interface Loosening {
  /** The workspace policy's key, `sandbox.network`, `limits.timeoutSeconds`, `rules[3]` (`no-push`)… */
  readonly key: string;
  readonly message: string;
}

export interface Merged<T> {
  readonly value: T;
  readonly loosened: readonly Loosening[];
}

/**
 * The sandbox of a managed and a workspace layer, never looser than the
 * managed one:
 * - a layer whose `mode` is `off` (or has no section) states no sandbox: the
 *   other's stands; `mode: required` in the managed layer cannot be turned off;
 * - `writable`, `readable`, `unixSockets.allow` and the network allowlist are
 *   intersected (`none` < allowlist < `all`);
 * - `readOnly`, `hidden` and `allowlistedTrees` are united;
 *   `protectGit` and `privateTmp` hold when either layer sets them;
 * - the managed `user` stands when it names one;
 * - a managed `tier` of `namespaces` or `landlock` stands; under a managed
 *   `auto` (or none) the workspace's tier is used;
 * - `runLater`: additions united, a removal only when both layers remove it.
 */
export function mergeSandbox(managed: SandboxPolicy, workspace: SandboxPolicy): Merged<SandboxPolicy> {
  if (managed.mode === 'off') return { value: workspace, loosened: [] };
  if (workspace.mode === 'off') {
    return {
      value: managed,
      loosened: [
        {
          key: 'sandbox.mode',
          message:
            'the workspace policy runs commands unconfined (sandbox mode off, or no sandbox section); the managed policy requires the sandbox: its sandbox section is used',
        },
      ],
    };
  }
  const loosened: Loosening[] = [];
  const narrowed = (key: string, extra: readonly string[], what: string): void => {
    if (extra.length > 0)
      loosened.push({ key, message: `${extra.join(', ')} ${what} outside what the managed policy grants` });
  };
  narrowed('sandbox.filesystem.writable', outside(workspace.writable, managed.writable), 'would be writable');
  const mReadable = managed.readable ?? [];
  const wReadable = workspace.readable ?? [];
  narrowed('sandbox.filesystem.readable', outside(wReadable, mReadable), 'would be readable');
  const mSockets = managed.unixSockets?.allow ?? [];
  const wSockets = workspace.unixSockets?.allow ?? [];
  narrowed(
    'sandbox.unixSockets.allow',
    wSockets.filter((s) => !mSockets.includes(s)),
    'would be reachable',
  );
  const network = mergeNetwork(managed.network, workspace.network);
  loosened.push(...network.loosened);
  for (const key of ['protectGit', 'privateTmp'] as const) {
    if (managed[key] && !workspace[key])
      loosened.push({
        key: `sandbox.filesystem.${key}`,
        message: `the workspace turns ${key} off; the managed policy keeps it on`,
      });
  }
  const user = managed.user ?? workspace.user ?? null;
  if (managed.user != null && workspace.user != null && workspace.user !== managed.user) {
    loosened.push({
      key: 'sandbox.user',
      message: `commands run as the managed policy's user ${managed.user}`,
    });
  }
  const managedTier = managed.tier ?? 'auto';
  const tier = managedTier === 'auto' ? (workspace.tier ?? 'auto') : managedTier;
  if (
    managedTier !== 'auto' &&
    workspace.tier !== undefined &&
    workspace.tier !== 'auto' &&
    workspace.tier !== managedTier
  ) {
    loosened.push({
      key: 'sandbox.tier',
      message: `commands run under the managed policy's tier ${managedTier}, not ${workspace.tier}`,
    });
  }
  const runLater = mergeRunLater(managed.runLater, workspace.runLater);
  const value: SandboxPolicy = Object.freeze({
    mode: 'required',
    writable: Object.freeze(intersectRoots(workspace.writable, managed.writable)),
    readOnly: Object.freeze(unite(managed.readOnly, workspace.readOnly)),
    hidden: Object.freeze(unite(managed.hidden, workspace.hidden)),
    protectGit: managed.protectGit || workspace.protectGit,
    privateTmp: managed.privateTmp || workspace.privateTmp,
    network: network.value,
    user,
    tier,
    allowlistedTrees: Object.freeze(unite(managed.allowlistedTrees ?? [], workspace.allowlistedTrees ?? [])),
    readable: Object.freeze(intersectRoots(wReadable, mReadable)),
    unixSockets: Object.freeze({ allow: Object.freeze(wSockets.filter((s) => mSockets.includes(s))) }),
    ...(runLater !== undefined && { runLater }),
  });
  return { value, loosened };
}

type Network = SandboxPolicy['network'];

/** `none` < an allowlist < `all`; two allowlists: the hosts both allow. */
export function mergeNetwork(managed: Network, workspace: Network): Merged<Network> {
  const widened = (what: string): Loosening[] => [
    {
      key: 'sandbox.network',
      message: `${what} outside the managed policy's network (${describe(managed)})`,
    },
  ];
  if (managed === 'none')
    return { value: 'none', loosened: workspace === 'none' ? [] : widened(describe(workspace)) };
  if (managed === 'all') return { value: workspace, loosened: [] };
  if (workspace === 'none') return { value: 'none', loosened: [] };
  if (workspace === 'all') return { value: managed, loosened: widened('all') };
  const extra = hostsOutside(workspace.allow, managed.allow);
  const allow = intersectHosts(workspace.allow, managed.allow);
  const value: Network = allow.length === 0 ? 'none' : Object.freeze({ allow: Object.freeze(allow) });
  return { value, loosened: extra.length > 0 ? widened(extra.join(', ')) : [] };
}

function describe(network: Network): string {
  return typeof network === 'string' ? network : `allow ${network.allow.join(', ')}`;
}

function mergeRunLater(
  managed: RunLaterPolicy | undefined,
  workspace: RunLaterPolicy | undefined,
): RunLaterPolicy | undefined {
  if (managed === undefined) return workspace;
  if (workspace === undefined) return managed;
  const add = [...managed.add, ...workspace.add.filter((w) => !managed.add.some((m) => m.path === w.path))];
  const remove = workspace.remove.filter((w) => managed.remove.some((m) => m.path === w.path));
  return Object.freeze({ add: Object.freeze(add), remove: Object.freeze(remove) });
}

/** Each limit takes the smaller value of the layers that set it. */
export function mergeLimits(managed: PolicyLimits, workspace: PolicyLimits): Merged<PolicyLimits> {
  const loosened: Loosening[] = [];
  const out: Record<string, number> = { ...(workspace as Record<string, number>) };
  for (const [key, value] of Object.entries(managed as Record<string, number | undefined>)) {
    if (value === undefined) continue;
    const asked = out[key];
    if (asked !== undefined && asked > value) {
      loosened.push({
        key: `limits.${key}`,
        message: `${asked} is above the managed policy's ${value}: ${value} stands`,
      });
    }
    out[key] = asked === undefined ? value : Math.min(asked, value);
  }
  return { value: Object.freeze(out) as PolicyLimits, loosened };
}
