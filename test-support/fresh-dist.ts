import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Some tests run built files: the sandbox and e2e lanes start `node
 * packages/cli/dist/bin.js`, which loads the other packages from their
 * dist/, and the process lane forks the judge worker and the audit writer's
 * child from packages/*\/dist. They would test stale code if a source changed
 * after the last build, so this check runs before those lanes (jest.config.ts,
 * `globalSetup`) and
 * fails the run, naming the file, unless:
 *
 * - every package's `dist/.tsbuildinfo` (written by each `tsc -b` that builds
 *   the package) is at least as new as every file under its `src/`, and
 * - `packages/cli/dist/bin.js` (written by scripts/bundle-cli.mjs after
 *   `tsc -b`) is at least as new as the cli's `dist/.tsbuildinfo`.
 *
 * It compares modification times only, so it never rebuilds and costs a
 * directory walk.
 */
const BUILD = 'npx tsc -b && node scripts/bundle-cli.mjs';

export function staleBuild(root: string): string | undefined {
  const packages = join(root, 'packages');
  for (const name of readdirSync(packages).sort()) {
    const dir = join(packages, name);
    if (!existsSync(join(dir, 'tsconfig.json'))) continue;
    const info = join(dir, 'dist', '.tsbuildinfo');
    if (!existsSync(info)) return `${relative(root, info)} is missing: the package was never built`;
    const built = statSync(info).mtimeMs;
    const newer = newestFile(join(dir, 'src'));
    if (newer !== undefined && newer.mtimeMs > built) {
      return `${relative(root, newer.path)} is newer than ${relative(root, info)}`;
    }
  }
  const cliInfo = join(packages, 'cli', 'dist', '.tsbuildinfo');
  const bin = join(packages, 'cli', 'dist', 'bin.js');
  if (!existsSync(bin)) return `${relative(root, bin)} is missing: the CLI was never bundled`;
  if (statSync(cliInfo).mtimeMs > statSync(bin).mtimeMs) {
    return `${relative(root, bin)} is older than ${relative(root, cliInfo)} (tsc ran, the bundle did not)`;
  }
  return undefined;
}

function newestFile(dir: string): { path: string; mtimeMs: number } | undefined {
  let newest: { path: string; mtimeMs: number } | undefined;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const found = entry.isDirectory()
      ? newestFile(path)
      : entry.isFile()
        ? { path, mtimeMs: statSync(path).mtimeMs }
        : undefined;
    if (found !== undefined && (newest === undefined || found.mtimeMs > newest.mtimeMs)) newest = found;
  }
  return newest;
}

/** Throws, naming the stale file and the command to run, unless the build under `root` is fresh. */
export function freshDist(root: string): void {
  const stale = staleBuild(root);
  if (stale !== undefined) {
    const error = new Error(
      `stale build: ${stale}. These tests run the built packages/*/dist; rebuild with: ${BUILD}`,
    );
    error.stack = `Error: ${error.message}`; // the message is the whole story
    throw error;
  }
}

/**
 * jest's `globalSetup` calls the default export with the run's and the
 * lane's configs; the lane's `rootDir` is the repository. (jest loads a
 * global setup as CommonJS, so this module names neither `import.meta` nor
 * `__dirname`.)
 */
export default function globalSetup(_globalConfig: unknown, projectConfig: { rootDir: string }): void {
  freshDist(projectConfig.rootDir);
}
