/**
 * The allowlisted view's defaults and the lists `policy check` warns with.
 * Paths are written as in a policy file (`~` is the server's HOME).
 */

/**
 * Trees that appear with only what the policy names inside them, when the
 * policy does not set `filesystem.allowlistedTrees`: the home directory
 * (credentials of every kind live there; a deny-list of them is never
 * complete), root's home, and `/run` (`/var/run` is usually a link to it:
 * daemons' control sockets and runtime state).
 */
export const DEFAULT_ALLOWLISTED_TREES: readonly string[] = ['~', '/root', '/run', '/var/run'];

/**
 * What the view shows read-only inside those trees when the policy does not
 * set `filesystem.readable`: git's own configuration (not its credential
 * store) and toolchains installed in HOME. Nothing here holds a secret or a
 * socket by design.
 */
export const DEFAULT_READABLE: readonly string[] = [
  '~/.gitconfig',
  '~/.config/git/config',
  '~/.config/git/ignore',
  '~/.config/git/attributes',
  '~/.editorconfig',
  '~/.nvm',
  '~/.volta',
  '~/.pyenv',
  '~/.rbenv',
  '~/.rustup',
  '~/.cargo/bin',
  '~/go',
  '~/.local/bin',
  '~/.bun/bin',
  '~/.deno/bin',
];

/**
 * The system's secret files, hidden from every command whatever the policy
 * says (`*` matches within one file name). A command that runs as root in
 * the kernel's eyes could otherwise read them.
 */
export const SYSTEM_SECRETS: readonly string[] = [
  '/etc/shadow',
  '/etc/shadow-',
  '/etc/gshadow',
  '/etc/gshadow-',
  '/etc/ssh/*_key',
  '/etc/ssl/private',
];

/**
 * Known credential files and directories (`policy check` warns when a
 * readable or writable path holds one). Not a deny-list: the view hides
 * them because nothing makes them readable; this only catches a policy
 * that does.
 */
export const KNOWN_CREDENTIAL_FILES: readonly string[] = [
  '~/.ssh',
  '~/.aws',
  '~/.azure',
  '~/.kube',
  '~/.gnupg',
  '~/.docker/config.json',
  '~/.docker/key.pem',
  '~/.config/gcloud',
  '~/.config/gh/hosts.yml',
  '~/.config/git/credentials',
  '~/.config/glab-cli/config.yml',
  '~/.config/containers/auth.json',
  '~/.config/hub',
  '~/.git-credentials',
  '~/.netrc',
  '~/.npmrc',
  '~/.yarnrc.yml',
  '~/.pypirc',
  '~/.gem/credentials',
  '~/.cargo/credentials',
  '~/.cargo/credentials.toml',
  '~/.m2/settings.xml',
  '~/.gradle/gradle.properties',
  '~/.terraform.d/credentials.tfrc.json',
  '~/.vault-token',
  '~/.pgpass',
  '~/.my.cnf',
  '~/.claude/.credentials.json',
  '~/.codex/auth.json',
  '~/.password-store',
  '~/.local/share/keyrings',
  '~/.bash_history',
  '~/.zsh_history',
  '~/.python_history',
  '~/.psql_history',
  '~/.mysql_history',
];

/**
 * Where credential daemons put their sockets (`policy check` warns when a
 * readable or writable path holds one; at run time every listening host
 * socket not allowed is covered anyway).
 */
export const KNOWN_SOCKET_PLACES: readonly string[] = [
  '~/.cache/git/credential',
  '~/.git-credential-cache',
  '~/.gnupg',
  '~/.ssh',
  '~/.1password',
  '~/.bitwarden-ssh-agent.sock',
  '~/.var/app/com.bitwarden.desktop',
  '~/.keepassxc',
  '/run/user',
];
