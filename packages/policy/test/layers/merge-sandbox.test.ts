import { join } from 'node:path';
import { type LoadedPolicy, layerPolicies, parsePolicyText, type SandboxPolicy } from '@termgate/policy';

// Paths that do not exist: the loader keeps them as written (nothing to resolve).
const R = '/nonexistent-termgate-layers';

function policy(body: string, name: string): LoadedPolicy {
  return parsePolicyText(`default: allow\n${body}`, join(R, `${name}.yaml`));
}

function sandboxed(fs: string, rest = ''): string {
  return `sandbox:\n  mode: required\n  filesystem:\n${fs}${rest}`;
}

function merged(managed: string, workspace: string) {
  return layerPolicies(policy(managed, 'managed'), policy(workspace, 'workspace'));
}

/** managed section × workspace section → the merged value of one key, and whether a loosening was reported for it. */
const SANDBOX_TABLE: readonly {
  readonly name: string;
  readonly managed: string;
  readonly workspace: string;
  readonly pick: (s: SandboxPolicy) => unknown;
  readonly want: unknown;
  readonly warns: string | null;
}[] = [
  {
    name: 'writable: a root inside the managed one is kept',
    managed: sandboxed(`    writable: [${R}/ws]\n`),
    workspace: sandboxed(`    writable: [${R}/ws/app]\n`),
    pick: (s) => s.writable,
    want: [`${R}/ws/app`],
    warns: null,
  },
  {
    name: 'writable: a workspace root above the managed one narrows to the managed one',
    managed: sandboxed(`    writable: [${R}/ws/app]\n`),
    workspace: sandboxed(`    writable: [${R}/ws]\n`),
    pick: (s) => s.writable,
    want: [`${R}/ws/app`],
    warns: 'sandbox.filesystem.writable',
  },
  {
    name: 'attack: a writable root outside the managed ones is dropped',
    managed: sandboxed(`    writable: [${R}/ws]\n`),
    workspace: sandboxed(`    writable: [${R}/ws, /etc, ${R}/wsx]\n`),
    pick: (s) => s.writable,
    want: [`${R}/ws`],
    warns: 'sandbox.filesystem.writable',
  },
  {
    name: 'readable: intersected',
    managed: sandboxed(`    readable: [${R}/home/.gitconfig, ${R}/home/.nvm]\n`),
    workspace: sandboxed(`    readable: [${R}/home/.nvm/bin, ${R}/home/.ssh]\n`),
    pick: (s) => s.readable,
    want: [`${R}/home/.nvm/bin`],
    warns: 'sandbox.filesystem.readable',
  },
  {
    name: 'readOnly: united',
    managed: sandboxed(`    readOnly: [${R}/ws/.envrc]\n`),
    workspace: sandboxed(`    readOnly: [${R}/ws/Makefile]\n`),
    pick: (s) => s.readOnly,
    want: [`${R}/ws/.envrc`, `${R}/ws/Makefile`],
    warns: null,
  },
  {
    name: 'hidden: united (a workspace cannot unhide)',
    managed: sandboxed(`    hidden: [${R}/secrets]\n`),
    workspace: sandboxed(`    hidden: [${R}/other]\n`),
    pick: (s) => s.hidden,
    want: [`${R}/secrets`, `${R}/other`],
    warns: null,
  },
  {
    name: 'allowlistedTrees: united',
    managed: sandboxed(`    allowlistedTrees: [${R}/home]\n`),
    workspace: sandboxed(`    allowlistedTrees: [${R}/run]\n`),
    pick: (s) => s.allowlistedTrees,
    want: [`${R}/home`, `${R}/run`],
    warns: null,
  },
  {
    name: 'protectGit: the managed true stands',
    managed: sandboxed('    protectGit: true\n'),
    workspace: sandboxed('    protectGit: false\n'),
    pick: (s) => s.protectGit,
    want: true,
    warns: 'sandbox.filesystem.protectGit',
  },
  {
    name: 'protectGit: a workspace may turn it on',
    managed: sandboxed('    protectGit: false\n'),
    workspace: sandboxed('    protectGit: true\n'),
    pick: (s) => s.protectGit,
    want: true,
    warns: null,
  },
  {
    name: 'privateTmp: the managed true stands',
    managed: sandboxed('    privateTmp: true\n'),
    workspace: sandboxed('    privateTmp: false\n'),
    pick: (s) => s.privateTmp,
    want: true,
    warns: 'sandbox.filesystem.privateTmp',
  },
  {
    name: 'unixSockets: intersected by path',
    managed: sandboxed('    writable: [/w]\n', '  unixSockets: { allow: [/run/a.sock, /run/b.sock] }\n'),
    workspace: sandboxed(
      '    writable: [/w]\n',
      '  unixSockets: { allow: [/run/b.sock, /run/docker.sock] }\n',
    ),
    pick: (s) => s.unixSockets?.allow,
    want: ['/run/b.sock'],
    warns: 'sandbox.unixSockets.allow',
  },
  {
    name: 'user: the managed one stands',
    managed: sandboxed('    writable: [/w]\n', '  user: fleet-sandbox\n'),
    workspace: sandboxed('    writable: [/w]\n', '  user: nobody\n'),
    pick: (s) => s.user,
    want: 'fleet-sandbox',
    warns: 'sandbox.user',
  },
  {
    name: 'user: the workspace names one when the managed layer does not',
    managed: sandboxed('    writable: [/w]\n'),
    workspace: sandboxed('    writable: [/w]\n', '  user: nobody\n'),
    pick: (s) => s.user,
    want: 'nobody',
    warns: null,
  },
  {
    name: 'tier: a managed namespaces stands over a workspace landlock',
    managed: sandboxed('    writable: [/w]\n', '  tier: namespaces\n'),
    workspace: sandboxed('    writable: [/w]\n', '  tier: landlock\n'),
    pick: (s) => s.tier,
    want: 'namespaces',
    warns: 'sandbox.tier',
  },
  {
    name: 'tier: a managed landlock stands over a workspace auto',
    managed: sandboxed('    writable: [/w]\n', '  tier: landlock\n'),
    workspace: sandboxed('    writable: [/w]\n'),
    pick: (s) => s.tier,
    want: 'landlock',
    warns: null,
  },
  {
    name: 'tier: under a managed auto the workspace chooses',
    managed: sandboxed('    writable: [/w]\n'),
    workspace: sandboxed('    writable: [/w]\n', '  tier: landlock\n'),
    pick: (s) => s.tier,
    want: 'landlock',
    warns: null,
  },
  {
    name: 'network: an allowlist ∩ an allowlist',
    managed: sandboxed(
      '    writable: [/w]\n',
      '  network: { allow: [registry.npmjs.org, "*.github.com"] }\n',
    ),
    workspace: sandboxed(
      '    writable: [/w]\n',
      '  network: { allow: [api.github.com, registry.npmjs.org] }\n',
    ),
    pick: (s) => s.network,
    want: { allow: ['api.github.com', 'registry.npmjs.org'] },
    warns: null,
  },
  {
    name: 'attack: network widened to more hosts',
    managed: sandboxed('    writable: [/w]\n', '  network: { allow: [registry.npmjs.org] }\n'),
    workspace: sandboxed(
      '    writable: [/w]\n',
      '  network: { allow: [registry.npmjs.org, "*.evil.example"] }\n',
    ),
    pick: (s) => s.network,
    want: { allow: ['registry.npmjs.org'] },
    warns: 'sandbox.network',
  },
  {
    name: 'attack: network widened to all',
    managed: sandboxed('    writable: [/w]\n', '  network: { allow: [registry.npmjs.org] }\n'),
    workspace: sandboxed('    writable: [/w]\n', '  network: all\n'),
    pick: (s) => s.network,
    want: { allow: ['registry.npmjs.org'] },
    warns: 'sandbox.network',
  },
  {
    name: 'attack: network opened where the managed one is none',
    managed: sandboxed('    writable: [/w]\n', '  network: none\n'),
    workspace: sandboxed('    writable: [/w]\n', '  network: { allow: [example.com] }\n'),
    pick: (s) => s.network,
    want: 'none',
    warns: 'sandbox.network',
  },
  {
    name: 'network: a wildcard narrowed by a workspace name under it',
    managed: sandboxed('    writable: [/w]\n', '  network: { allow: ["*.example.com"] }\n'),
    workspace: sandboxed('    writable: [/w]\n', '  network: { allow: [example.com, a.example.com] }\n'),
    pick: (s) => s.network,
    want: { allow: ['a.example.com'] },
    warns: 'sandbox.network',
  },
  {
    name: 'network: disjoint allowlists leave none',
    managed: sandboxed('    writable: [/w]\n', '  network: { allow: [a.example] }\n'),
    workspace: sandboxed('    writable: [/w]\n', '  network: { allow: [b.example] }\n'),
    pick: (s) => s.network,
    want: 'none',
    warns: 'sandbox.network',
  },
  {
    name: 'network: managed all leaves the workspace allowlist',
    managed: sandboxed('    writable: [/w]\n', '  network: all\n'),
    workspace: sandboxed('    writable: [/w]\n', '  network: { allow: [b.example] }\n'),
    pick: (s) => s.network,
    want: { allow: ['b.example'] },
    warns: null,
  },
  {
    name: 'runLater: additions united, a removal only when both remove it',
    managed: sandboxed(
      '    runLater:\n      add: [{ path: m.sh, reason: m }]\n      remove: [{ path: .npmrc, reason: m }]\n',
    ),
    workspace: sandboxed(
      '    runLater:\n      add: [{ path: w.sh, reason: w }]\n      remove: [{ path: .npmrc, reason: w }, { path: lefthook.yml, reason: w }]\n',
    ),
    pick: (s) => ({ add: s.runLater?.add.map((a) => a.path), remove: s.runLater?.remove.map((r) => r.path) }),
    want: { add: ['m.sh', 'w.sh'], remove: ['.npmrc'] },
    warns: null,
  },
  {
    name: 'attack: mode required cannot be turned off',
    managed: sandboxed(`    writable: [${R}/ws]\n`),
    workspace: 'sandbox:\n  mode: off\n',
    pick: (s) => ({ mode: s.mode, writable: s.writable }),
    want: { mode: 'required', writable: [`${R}/ws`] },
    warns: 'sandbox.mode',
  },
  {
    name: 'attack: a workspace without a sandbox section gets the managed sandbox',
    managed: sandboxed(`    writable: [${R}/ws]\n`, '  network: none\n'),
    workspace: '',
    pick: (s) => ({ mode: s.mode, network: s.network }),
    want: { mode: 'required', network: 'none' },
    warns: 'sandbox.mode',
  },
  {
    name: 'a managed layer without a sandbox leaves the workspace sandbox as written',
    managed: '',
    workspace: sandboxed(`    writable: [${R}/ws]\n`, '  network: all\n'),
    pick: (s) => ({ mode: s.mode, writable: s.writable, network: s.network }),
    want: { mode: 'required', writable: [`${R}/ws`], network: 'all' },
    warns: null,
  },
];

describe('sandbox keys: managed × workspace → merged', () => {
  test.each(SANDBOX_TABLE)('$name', ({ managed, workspace, pick, want, warns }) => {
    const layers = merged(managed, workspace);
    expect(pick(layers.effective.sandbox)).toEqual(want);
    const keys = layers.loosened.map((l) => l.key);
    if (warns === null) expect(keys).toEqual([]);
    else expect(keys).toContain(warns);
  });

  test('the managed sandbox mode required stands while the workspace changes nothing else', () => {
    const layers = merged(sandboxed(`    writable: [${R}/ws]\n`), sandboxed(`    writable: [${R}/ws]\n`));
    expect(layers.effective.sandbox.mode).toBe('required');
    expect(layers.loosened).toEqual([]);
  });
});

const LIMITS: readonly (readonly [string, number, number, number, boolean])[] = [
  // key, managed, workspace, merged, warned
  ['maxTerminals', 4, 2, 2, false],
  ['maxTerminals', 4, 16, 4, true],
  ['maxOutputBytes', 1_000_000, 5_000_000, 1_000_000, true],
  ['maxOutputChars', 20_000, 10_000, 10_000, false],
  ['timeoutSeconds', 600, 3600, 600, true],
  ['processes', 64, 32, 32, false],
  ['memoryMiB', 512, 4096, 512, true],
  ['tmpMiB', 64, 64, 64, false],
  ['totalMemoryMiB', 2048, 8192, 2048, true],
];

describe('limits: the stricter value', () => {
  test.each(LIMITS)('%s: managed %d, workspace %d → %d', (key, m, w, want, warned) => {
    const layers = merged(`limits: { ${key}: ${m} }\n`, `limits: { ${key}: ${w} }\n`);
    expect((layers.effective.limits as Record<string, number>)[key]).toBe(want);
    expect(layers.loosened.some((l) => l.key === `limits.${key}`)).toBe(warned);
  });

  test('a limit only one layer sets is that layer’s', () => {
    const layers = merged('limits: { timeoutSeconds: 60 }\n', 'limits: { maxTerminals: 3 }\n');
    expect(layers.effective.limits).toEqual({ timeoutSeconds: 60, maxTerminals: 3 });
  });
});

describe('the effective policy', () => {
  test('a server variable is inherited only when both layers inherit it', () => {
    const layers = merged('env: { inherit: [PATH, HOME] }\n', 'env: { inherit: [PATH, LANG, AWS_*] }\n');
    const env = layers.effective.inheritedEnv({ PATH: '/bin', HOME: '/h', LANG: 'C', AWS_REGION: 'x' });
    expect(env).toEqual({ PATH: '/bin' });
  });

  test('names the workspace file: decisions and records keep its path and sha256', () => {
    const layers = merged('', 'rules:\n  - { id: a, decision: allow, program: ls }\n');
    expect(layers.effective.path).toBe(join(R, 'workspace.yaml'));
    expect(layers.effective.sha256).toBe(layers.workspace.sha256);
    expect(layers.managed.sha256).not.toBe(layers.workspace.sha256);
  });
});
