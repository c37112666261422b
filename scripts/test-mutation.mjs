#!/usr/bin/env node
// Mutation testing of the security-critical file groups with StrykerJS.
//
//   node scripts/test-mutation.mjs [group…] [--stryker-option…]
//   (pnpm test:mutation [group…] [--stryker-option…])
//
// With no group, every group of stryker/groups.mjs runs, one after the other.
// Arguments that start with `-` go to `stryker run` (e.g. `--force`: test
// every mutant again, ignoring the incremental results).
// StrykerJS 10 needs Node.js 22 or later, so it runs on the pinned Node.js 24
// of scripts/pinned-node.mjs (installed on first use) whatever runs pnpm, and
// under `nice -n 15`: it keeps a core busy for minutes. Runs are incremental
// (reports/mutation/<group>/stryker-incremental.json, not committed): a mutant
// whose file and tests are unchanged keeps its last result. Exits non-zero
// when a group scores below its break threshold, the build or StrykerJS fails.
import { spawnSync } from 'node:child_process';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GROUPS } from '../stryker/groups.mjs';
import { pinnedNode } from './pinned-node.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const asked = process.argv.slice(2).filter((arg) => !arg.startsWith('-'));
const strykerArgs = process.argv.slice(2).filter((arg) => arg.startsWith('-'));
const unknown = asked.filter((name) => GROUPS[name] === undefined);
if (unknown.length > 0) {
  console.error(`test-mutation: no group ${unknown.join(', ')}; groups:`);
  for (const [name, group] of Object.entries(GROUPS)) console.error(`  ${name}: ${group.description}`);
  process.exit(1);
}
const names = asked.length > 0 ? asked : Object.keys(GROUPS);
const { version, bin, node } = pinnedNode(24, 'test-mutation');
const stryker = join(root, 'node_modules', '@stryker-mutator', 'core', 'bin', 'stryker.js');

// The TypeScript checker resolves other workspace packages (`@termgate/x`)
// through their package.json exports, i.e. their built dist/ declarations:
// build them first (the production packages of stryker/tsconfig.json;
// incremental, quick when nothing changed).
const build = spawnSync(
  'nice',
  [
    '-n',
    '15',
    process.execPath,
    join(root, 'node_modules', 'typescript', 'bin', 'tsc'),
    '-b',
    'stryker/tsconfig.json',
  ],
  {
    cwd: root,
    stdio: 'inherit',
  },
);
if (build.status !== 0) {
  console.error('test-mutation: tsc -b failed');
  process.exit(1);
}

let failed = [];
for (const name of names) {
  console.error(`test-mutation: group ${name} (${GROUPS[name].description}) on Node.js v${version}`);
  const run = spawnSync('nice', ['-n', '15', node, stryker, 'run', 'stryker.config.mjs', ...strykerArgs], {
    cwd: root,
    stdio: 'inherit',
    env: {
      ...process.env,
      TERMGATE_MUTATION_GROUP: name,
      PATH: `${bin}${delimiter}${process.env.PATH ?? ''}`,
    },
  });
  if (run.status !== 0) failed = [...failed, name];
}
if (failed.length > 0) {
  console.error(
    `test-mutation: failed (below the break threshold, or StrykerJS failed): ${failed.join(', ')}`,
  );
  process.exit(1);
}
