/**
 * The global options of the programs the shipped policies write rules
 * about: options that come before the subcommand and do not change which
 * subcommand runs (`git -p push` is `git push`). A table per program, so
 * that a rule about a subcommand matches after any of them. docs/POLICY-SPELLINGS.md
 * lists them; extend a table here when a program grows an option.
 *
 * Contract of one table:
 * - `valued`: options that take a value, as the next word (`-C dir`,
 *   `--git-dir .git`) or attached (`-Cdir`, `--git-dir=.git`). Short ones
 *   are single letters; a short cluster (`-nprod`) is the letter and its value.
 * - `attachedOnly`: long options whose value, if any, is only ever attached
 *   (`--exec-path=DIR`, `terraform -chdir=DIR`); as a bare word they are flags.
 * - Every other word starting with `-` before the subcommand is a flag
 *   (no value). A program whose unknown options may take a value is listed
 *   with its valued ones; the tables err towards listing.
 * - `plus`: a first word starting with `+` is a selector (`cargo +nightly`).
 * - `aliases`: subcommand spellings that mean another (`docker image push`
 *   is `docker push`), rewritten after the options are removed.
 * - `subcommands`: per-subcommand tables for programs whose subcommands take
 *   their own global options before a sub-subcommand (`docker buildx
 *   --builder x build`).
 * - `longSingleDash`: long options are written with one dash (`terraform
 *   -chdir=x`): no short clusters.
 */
export interface ProgramGrammar {
  readonly valued?: { readonly short?: string; readonly long?: readonly string[] };
  readonly attachedOnly?: readonly string[];
  readonly plus?: boolean;
  readonly aliases?: Readonly<Record<string, readonly string[]>>;
  readonly subcommands?: Readonly<Record<string, ProgramGrammar>>;
  readonly longSingleDash?: boolean;
}

const DOCKER_ALIASES: Readonly<Record<string, readonly string[]>> = {
  'image push': ['push'],
  'image build': ['build'],
  'image pull': ['pull'],
  'image rm': ['rmi'],
  'image tag': ['tag'],
  'buildx build': ['build'],
  'buildx b': ['build'],
  'builder build': ['build'],
  'container run': ['run'],
  'container exec': ['exec'],
  'container rm': ['rm'],
  'manifest push': ['push'],
};

const NPM_VALUED = [
  'registry',
  'prefix',
  'userconfig',
  'globalconfig',
  'cache',
  'loglevel',
  'workspace',
  'tag',
  'otp',
  'access',
  'scope',
  'cwd',
  'dir',
  'filter',
  'reporter',
  'store-dir',
  'cache-folder',
  'modules-folder',
  'mutex',
  'network-timeout',
  'use-yarnrc',
  'global-folder',
  'link-folder',
  'script-shell',
  'node-options',
  'workspaces',
];

/** Program basename → its table. */
export const PROGRAM_GRAMMARS: Readonly<Record<string, ProgramGrammar>> = {
  git: {
    valued: {
      short: 'Cc',
      long: ['git-dir', 'work-tree', 'namespace', 'super-prefix', 'config-env', 'attr-source', 'list-cmds'],
    },
    attachedOnly: ['exec-path'],
  },
  kubectl: {
    valued: {
      short: 'nsv',
      long: [
        'namespace',
        'context',
        'cluster',
        'user',
        'kubeconfig',
        'server',
        'token',
        'request-timeout',
        'as',
        'as-group',
        'as-uid',
        'cache-dir',
        'certificate-authority',
        'client-certificate',
        'client-key',
        'tls-server-name',
        'v',
        'vmodule',
        'log-dir',
        'log-file',
        'profile',
        'profile-output',
        'password',
        'username',
        'log-flush-frequency',
      ],
    },
  },
  helm: {
    valued: {
      short: 'n',
      long: [
        'namespace',
        'kube-context',
        'kubeconfig',
        'kube-apiserver',
        'kube-as-user',
        'kube-as-group',
        'kube-ca-file',
        'kube-token',
        'kube-tls-server-name',
        'registry-config',
        'repository-cache',
        'repository-config',
        'burst-limit',
        'qps',
        'content-cache',
      ],
    },
  },
  gh: { valued: { short: 'R', long: ['repo', 'hostname'] } },
  npm: { valued: { short: 'Cw', long: NPM_VALUED } },
  pnpm: { valued: { short: 'CF', long: NPM_VALUED } },
  yarn: { valued: { long: NPM_VALUED } },
  bun: { valued: { long: ['cwd', 'config', 'registry'] } },
  cargo: {
    plus: true,
    valued: { short: 'CZ', long: ['color', 'config', 'explain', 'manifest-path'] },
  },
  docker: {
    valued: {
      short: 'Hcl',
      long: ['host', 'context', 'config', 'log-level', 'tlscacert', 'tlscert', 'tlskey'],
    },
    aliases: DOCKER_ALIASES,
    subcommands: {
      buildx: { valued: { long: ['builder'] } },
      image: {},
      container: {},
      builder: {},
      manifest: {},
    },
  },
  podman: {
    valued: {
      short: 'c',
      long: [
        'connection',
        'url',
        'identity',
        'root',
        'runroot',
        'storage-driver',
        'log-level',
        'cgroup-manager',
        'runtime',
      ],
    },
    aliases: DOCKER_ALIASES,
  },
  terraform: { longSingleDash: true, attachedOnly: ['chdir'] },
  tofu: { longSingleDash: true, attachedOnly: ['chdir'] },
  poetry: { valued: { short: 'CP', long: ['directory', 'project'] } },
  gem: {},
  twine: {},
};
