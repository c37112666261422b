#!/usr/bin/env node
// Bundles the `termgate` command into packages/cli/dist/bin.js.
//
// Why: inversify 8 ships as ~250 unbundled ES modules, and loading them was
// half of serve's start-up time (docs/BENCHMARKS.md, mcp); measured again
// after the container change (#23), the unbundled entry still costs about
// 1.16× the bundle's main-thread CPU before the first answer
// (docs/BENCHMARKS.md, "cold start, the container wiring and the bundle",
// bench/mcp/cold-start.mjs). The bundle holds
// the CLI's own modules and its DI container (inversify, @inversifyjs/*,
// reflect-metadata); every other package stays external and is loaded from
// node_modules as usual, so packages that find data files next to their own
// modules (the policy grammar, schema and default policy) are untouched.
// Subcommands stay lazy: each is a chunk under dist/chunks/, loaded only when
// chosen, with its own external imports (a static import in one bundle file
// would be hoisted and loaded by every command).
// Run after `tsc -b`, which writes the unbundled entry dist/main.js.
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const cli = fileURLToPath(new URL('../packages/cli/', import.meta.url));
const bundled = /^(inversify|@inversifyjs\/|reflect-metadata)/;

rmSync(`${cli}dist/chunks`, { recursive: true, force: true });
await build({
  entryPoints: { bin: `${cli}dist/main.js` },
  outdir: `${cli}dist`,
  chunkNames: 'chunks/[name]-[hash]',
  splitting: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: 'linked',
  logLevel: 'warning',
  plugins: [
    {
      name: 'external-except-di',
      setup(b) {
        b.onResolve({ filter: /^[^./]/ }, (args) =>
          bundled.test(args.path) ? undefined : { external: true },
        );
      },
    },
  ],
});
