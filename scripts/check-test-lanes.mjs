#!/usr/bin/env node
// Checks that jest's lanes (the projects of jest.config.ts) split the suite:
// every `*.test.ts` file under packages/ (outside node_modules, dist and the
// staged package) is run by exactly one lane, as jest itself lists them. A
// test in no lane would never run; one in two would run twice. Exits non-zero
// naming the files. Part of `pnpm test` (docs/TESTING.md).
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const LANES = ['unit', 'process', 'sandbox', 'e2e'];

const onDisk = [];
const walk = (dir) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!['node_modules', 'dist', 'pack'].includes(entry.name)) walk(path);
    } else if (entry.name.endsWith('.test.ts')) onDisk.push(relative(root, path).split(sep).join('/'));
  }
};
walk(join(root, 'packages'));

const lanesOf = new Map(onDisk.map((file) => [file, []]));
const jest = join(root, 'node_modules', 'jest', 'bin', 'jest.js');
// One `jest --listTests` per lane, side by side: each costs a jest start-up.
const listed = await Promise.all(
  LANES.map((lane) =>
    // The flag the config asks for (the tests are ES modules), though listing loads no test.
    promisify(execFile)(
      process.execPath,
      ['--experimental-vm-modules', jest, '--listTests', '--json', '--selectProjects', lane],
      {
        cwd: root,
        maxBuffer: 16 * 1024 * 1024,
      },
    ).then(
      ({ stdout }) => ({ lane, paths: JSON.parse(stdout) }),
      (error) => {
        console.error(
          `check-test-lanes: jest --listTests --selectProjects ${lane} failed:\n${error.stderr ?? error}`,
        );
        process.exit(1);
      },
    ),
  ),
);
for (const { lane, paths } of listed) {
  for (const path of paths) {
    const file = relative(root, path).split(sep).join('/');
    if (!lanesOf.has(file)) lanesOf.set(file, []);
    lanesOf.get(file).push(lane);
  }
}

const wrong = [...lanesOf].filter(([, lanes]) => lanes.length !== 1);
if (wrong.length > 0) {
  console.error(
    'check-test-lanes: every test file must be in exactly one lane (jest.config.ts, docs/TESTING.md):',
  );
  for (const [file, lanes] of wrong)
    console.error(`  ${file}: ${lanes.length === 0 ? 'no lane' : lanes.join(' and ')}`);
  process.exit(1);
}
const counts = LANES.map((lane) => `${lane} ${[...lanesOf.values()].filter(([l]) => l === lane).length}`);
console.error(`check-test-lanes: ${lanesOf.size} test files, one lane each (${counts.join(', ')})`);
