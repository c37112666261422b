import { dirname, isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Absolute path of this compiled module, in both module systems the package
 * runs under: the built ESM (`dist/shell/module-location.js`) and ts-jest's
 * CommonJS (`src/shell/module-location.ts`). `import.meta` cannot appear in
 * source that jest loads as CommonJS, and a global `__filename` may exist in
 * ESM too (`node -e` defines one), so both read the first stack frame.
 */
function thisModuleFile(): string {
  const saved = Error.prepareStackTrace;
  try {
    Error.prepareStackTrace = (_error, frames) => frames;
    const frames = new Error().stack as unknown as NodeJS.CallSite[];
    const name = frames[0]?.getFileName();
    if (!name) throw new Error('cannot locate the @termgate/policy module');
    const path = name.startsWith('file:') ? fileURLToPath(name) : name;
    if (!isAbsolute(path)) throw new Error(`cannot locate the @termgate/policy module (got ${name})`);
    return path;
  } finally {
    Error.prepareStackTrace = saved;
  }
}

/** Directory of the package's `src` or `dist` folder (the parent of `shell/`). */
export const SOURCE_ROOT: string = resolve(dirname(thisModuleFile()), '..');

/** Repository root: `packages/policy/{src,dist}` is three levels below it. */
export const REPO_ROOT: string = resolve(SOURCE_ROOT, '..', '..', '..');

/** Absolute path of the shipped developer-workspace policy, `policies/default.yaml`. */
export const DEFAULT_POLICY_PATH: string = resolve(REPO_ROOT, 'policies', 'default.yaml');
