/**
 * The layering rules (ARCHITECTURE.md), enforced in CI (`pnpm run depcheck`).
 *   transport-stdio  framing only: imports nothing of ours
 *   transport-http   Streamable HTTP: imports nothing of ours (the core's
 *                    channel is matched structurally, as stdio's is); its
 *                    domain code does not import its own adapters
 *   termhost         processes and bytes: no protocol, transport or policy;
 *                    its domain code (all but src/adapters/ and src/sandbox/)
 *                    imports neither its adapters nor its sandbox
 *   core             protocols: the termhost's public API (ports), no adapters,
 *                    no sandbox
 *   policy           judges and records: the termhost's public API only; its
 *                    domain code (index.ts included) does not import its own
 *                    adapters, which are `@termgate/policy/adapters`
 *   audit            the hash-chained trail: a leaf, imports nothing of ours;
 *                    its domain code does not import its own adapters
 *   cli              the composition root: may import everything; it alone
 *                    (with tests and benchmarks) imports `@termgate/<x>/adapters`
 *                    and `@termgate/termhost/sandbox`;
 *                    its `audit` commands load the trail code only
 *
 * Workspace imports resolve to each package's source (tsconfig.depcruise.json),
 * as they do in jest: through `exports` they would reach dist/, which is not
 * cruised, and no rule would see them.
 */
const pkg = (name) => `^(packages/${name}/|@termgate/${name}$)`;
const inside = (name, sub) => `^packages/${name}/src/${sub}`;
/** A package's adapters, by file or through its `./adapters` subpath export. */
const adaptersOf = (name) => `^packages/${name}/src/adapters/`;
/** termhost's technology: its adapters and its sandbox (`./sandbox` subpath export). */
const termhostTechnology = [adaptersOf('termhost'), inside('termhost', 'sandbox/')];
const protocolLibs = '(@modelcontextprotocol|@agentclientprotocol)/';

module.exports = {
  forbidden: [
    {
      name: 'termhost-knows-no-protocol',
      severity: 'error',
      from: { path: pkg('termhost') },
      to: {
        path: [
          pkg('core'),
          pkg('transport-stdio'),
          pkg('transport-http'),
          pkg('policy'),
          pkg('cli'),
          protocolLibs,
        ],
      },
    },
    {
      name: 'termhost-domain-imports-no-adapter',
      comment:
        'The host takes its gate, spawner and observer from its caller; only the adapters know their technology.',
      severity: 'error',
      from: { path: inside('termhost', ''), pathNot: termhostTechnology },
      to: { path: termhostTechnology },
    },
    {
      name: 'transport-is-framing-only',
      severity: 'error',
      from: { path: pkg('transport-stdio') },
      to: { path: [pkg('core'), pkg('termhost'), pkg('policy'), pkg('cli'), protocolLibs] },
    },
    {
      name: 'http-transport-imports-nothing-of-ours',
      comment:
        'It serves an McpEndpoint port (the cli adapts McpServer to it) and knows no termgate package.',
      severity: 'error',
      from: { path: pkg('transport-http') },
      to: {
        path: [
          pkg('core'),
          pkg('termhost'),
          pkg('policy'),
          pkg('audit'),
          pkg('cli'),
          pkg('transport-stdio'),
          protocolLibs,
        ],
      },
    },
    {
      name: 'http-transport-domain-imports-no-adapter',
      severity: 'error',
      from: { path: '^packages/transport-http/src/', pathNot: inside('transport-http', 'adapters/') },
      to: { path: inside('transport-http', 'adapters/') },
    },
    {
      name: 'core-uses-termhost-ports-only',
      severity: 'error',
      from: { path: pkg('core') },
      to: {
        path: [pkg('policy'), pkg('cli'), pkg('transport-http'), 'cross-spawn', 'node:child_process'],
      },
    },
    {
      name: 'core-imports-no-termhost-adapter',
      comment:
        'Neither by file nor through `@termgate/termhost/adapters` or `/sandbox`; tests may, to build a real host.',
      severity: 'error',
      from: { path: inside('core', '') },
      to: { path: termhostTechnology },
    },
    {
      name: 'policy-knows-no-protocol',
      severity: 'error',
      from: {
        path: pkg('policy'),
        // Tests wire real sinks, as a composition root does.
        pathNot: [inside('policy', 'adapters/'), '^packages/policy/test/'],
      },
      to: { path: [pkg('core'), pkg('transport-stdio'), pkg('cli'), 'cross-spawn', protocolLibs] },
    },
    {
      name: 'policy-domain-imports-no-adapter',
      comment: 'Its tests may, to build a real host.',
      severity: 'error',
      from: {
        path: pkg('policy'),
        pathNot: [inside('policy', 'adapters/'), '^packages/policy/test/'],
      },
      to: { path: ['/adapters/', inside('termhost', 'sandbox/')] },
    },
    {
      name: 'policy-adapters-use-no-foreign-adapter',
      severity: 'error',
      from: { path: inside('policy', 'adapters/') },
      to: { path: [...termhostTechnology, pkg('core'), pkg('transport-stdio'), pkg('cli')] },
    },
    {
      name: 'only-cli-imports-adapters-subpaths',
      comment:
        '`@termgate/<x>/adapters`, `@termgate/audit/otlp` and `@termgate/termhost/sandbox` are for the composition root (and tests, which are not under src/).',
      severity: 'error',
      from: { path: '^packages/[^/]+/src/', pathNot: '^packages/cli/' },
      to: {
        path: [
          '^packages/[^/]+/src/adapters/index\\.ts$',
          '^packages/audit/src/adapters/otlp/index\\.ts$',
          '^packages/termhost/src/sandbox/index\\.ts$',
        ],
      },
    },
    {
      name: 'audit-is-a-leaf',
      comment:
        'The trail imports nothing of termgate (the gate builds the records it writes), so reading it loads no engine.',
      severity: 'error',
      from: { path: pkg('audit') },
      to: {
        path: [
          pkg('policy'),
          pkg('core'),
          pkg('cli'),
          pkg('termhost'),
          pkg('transport-stdio'),
          protocolLibs,
          'web-tree-sitter',
          'tree-sitter-bash',
        ],
      },
    },
    {
      name: 'audit-domain-imports-no-adapter',
      severity: 'error',
      from: { path: '^packages/audit/src/', pathNot: inside('audit', 'adapters/') },
      to: { path: inside('audit', 'adapters/') },
    },
    {
      name: 'audit-adapters-are-for-composition-roots',
      comment: 'Only the cli wires a sink; policy records through the AuditSink port.',
      severity: 'error',
      from: { path: '^packages/(policy|core|termhost|transport-stdio|transport-http)/src/' },
      to: { path: inside('audit', 'adapters/') },
    },
    {
      name: 'audit-is-for-policy-and-cli',
      comment: 'termhost, core and transport know nothing of the trail: the gate port stands between.',
      severity: 'error',
      from: { path: '^packages/(termhost|core|transport-stdio|transport-http)/' },
      to: { path: pkg('audit') },
    },
    {
      name: 'audit-commands-load-the-trail-only',
      comment:
        '`termgate audit …` must not load the policy engine or its parser (packages/cli/test/commands/audit-modules.test.ts checks the built CLI).',
      severity: 'error',
      from: { path: '^packages/cli/src/commands/audit' },
      to: {
        reachable: true,
        path: [
          pkg('policy'),
          pkg('core'),
          pkg('termhost'),
          pkg('transport-stdio'),
          pkg('transport-http'),
          '^packages/cli/src/(serve|acp-proxy)/',
          'web-tree-sitter',
          'tree-sitter-bash',
        ],
      },
    },
    {
      name: 'only-cli-is-a-composition-root',
      comment: 'inversify belongs to the composition root alone.',
      severity: 'error',
      from: { path: '^packages/(termhost|core|policy|audit|transport-stdio|transport-http)/src/' },
      to: { path: '(inversify|@inversifyjs)' },
    },
    {
      name: 'no-unresolvable',
      comment: 'An import that cannot be resolved cannot be checked: it fails the build instead.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|node_modules)/' },
    tsPreCompilationDeps: true,
    // tsconfig.test.json plus paths that map `@termgate/<name>` (and `/adapters`, `@termgate/termhost/sandbox`) to the
    // packages' sources. Resolved through node_modules they would land in the excluded
    // dist/, and every cross-package import would escape the rules above.
    tsConfig: { fileName: 'tsconfig.depcruise.json' },
    combinedDependencies: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.d.ts'],
    },
  },
};
