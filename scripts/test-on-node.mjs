#!/usr/bin/env node
// Runs jest under another maintained Node.js line, so that `pnpm test` proves
// termgate on each supported runtime and not only on the one that runs pnpm.
//
//   node scripts/test-on-node.mjs <major> [jest arguments…]
//
// The runtime is the pinned official build of scripts/pinned-node.mjs. Its
// directory is put first on PATH, so the tests, and every server they start
// with `process.execPath`, run on that Node.
//
// Nothing is skipped: an unsupported platform, a failed download or a binary
// that reports another version exits non-zero.
import { spawnSync } from 'node:child_process';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PINNED, pinnedNode } from './pinned-node.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const [major, ...jestArgs] = process.argv.slice(2);
if (PINNED[major] === undefined) {
  console.error(`test-on-node: usage: test-on-node.mjs <${Object.keys(PINNED).join('|')}> [jest args…]`);
  process.exit(1);
}
const { version, bin, node } = pinnedNode(major, 'test-on-node');

console.error(`test-on-node: running jest on Node.js v${version}`);
// --experimental-vm-modules: the tests are ES modules (jest.base.config.ts).
const jestJs = join(root, 'node_modules', 'jest', 'bin', 'jest.js');
const jest = spawnSync(node, ['--experimental-vm-modules', jestJs, ...jestArgs], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` },
});
process.exit(jest.status ?? 1);
