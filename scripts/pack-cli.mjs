#!/usr/bin/env node
// Builds the publishable `termgate` package and packs it with `npm pack`.
//
//   node scripts/pack-cli.mjs [--out DIR]     (after `tsc -b`; prints the tarball's path)
//
// The package is staged in packages/cli/pack/ (ignored by git) from
// packages/cli/package.json, which is its manifest (name, version, bin,
// engines, files, dependencies). In it:
// - dist/bin.js and dist/chunks/: the CLI with every workspace package
//   (@termgate/*) and its DI container bundled in, one chunk per subcommand
//   as in scripts/bundle-cli.mjs; the other npm packages stay external and
//   are the manifest's `dependencies` (the grammar's wasm comes with
//   tree-sitter-bash, resolved from the bundle as before);
// - dist/adapters/judge-worker.js and profiler-worker.js: the policy judge's
//   and the sandbox profiler's worker threads, bundled too (the server starts
//   them by path);
// - dist/schema/policy.schema.json: the policy schema, read next to the code;
// - policies/ (the shipped default policy), examples/, README.md, LICENSE.
// `TERMGATE_PACKAGED` tells the bundled policy code it runs from this layout
// (packages/policy/src/shell/module-location.ts).
// The repository's own packages/cli/dist (scripts/bundle-cli.mjs) is not
// touched, so tests running the built CLI meanwhile are not disturbed.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';

const repo = fileURLToPath(new URL('..', import.meta.url));
const cli = resolve(repo, 'packages/cli');
const stage = resolve(cli, 'pack');
const { values } = parseArgs({ options: { out: { type: 'string' } } });
const out = resolve(values.out ?? stage);

const manifest = JSON.parse(readFileSync(resolve(cli, 'package.json'), 'utf8'));
const main = resolve(cli, 'dist/main.js');
const worker = resolve(repo, 'packages/policy/dist/adapters/judge-worker.js');
const profilerWorker = resolve(repo, 'packages/policy/dist/adapters/profiler-worker.js');
for (const file of [main, worker, profilerWorker]) {
  if (!existsSync(file)) throw new Error(`${file} is missing: run \`npx tsc -b\` first`);
}

rmSync(stage, { recursive: true, force: true });
mkdirSync(stage, { recursive: true });
const external = new Set(Object.keys(manifest.dependencies ?? {}));
await build({
  entryPoints: { bin: main, 'adapters/judge-worker': worker, 'adapters/profiler-worker': profilerWorker },
  outdir: resolve(stage, 'dist'),
  chunkNames: 'chunks/[name]-[hash]',
  splitting: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: 'linked',
  logLevel: 'warning',
  define: { TERMGATE_PACKAGED: 'true' },
  plugins: [
    {
      name: 'declared-dependencies-external',
      setup(b) {
        // A bare import is external when it is (a subpath of) a declared dependency; any
        // other bare import is bundled, and a package neither declared nor workspace fails here.
        b.onResolve({ filter: /^[^./]/ }, (args) => {
          if (args.path.startsWith('node:')) return { external: true };
          const name = args.path.startsWith('@')
            ? args.path.split('/').slice(0, 2).join('/')
            : args.path.split('/')[0];
          if (external.has(name)) return { external: true };
          if (name.startsWith('@termgate/') || /^(inversify|@inversifyjs\/|reflect-metadata)/.test(name)) {
            return undefined;
          }
          return {
            errors: [{ text: `"${name}" is imported but not in packages/cli/package.json dependencies` }],
          };
        });
      },
    },
  ],
});
cpSync(resolve(repo, 'packages/policy/dist/schema'), resolve(stage, 'dist/schema'), { recursive: true });
cpSync(resolve(repo, 'policies'), resolve(stage, 'policies'), { recursive: true });
cpSync(resolve(repo, 'examples'), resolve(stage, 'examples'), { recursive: true });
for (const file of ['README.md', 'LICENSE']) {
  if (existsSync(resolve(repo, file))) cpSync(resolve(repo, file), resolve(stage, file));
}
// The staged package is the CLI alone: no library entry point, no workspace devDependencies, no scripts.
const { devDependencies: _dev, scripts: _scripts, exports: _exports, ...published } = manifest;
writeFileSync(resolve(stage, 'package.json'), `${JSON.stringify(published, null, 2)}\n`);

mkdirSync(out, { recursive: true });
const packed = JSON.parse(
  execFileSync('npm', ['pack', '--json', '--pack-destination', out], { cwd: stage, encoding: 'utf8' }),
);
process.stdout.write(`${resolve(out, packed[0].filename)}\n`);
