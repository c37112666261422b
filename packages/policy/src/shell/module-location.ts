import { basename, dirname, resolve } from 'node:path';

/**
 * Directory of the package's `src` or `dist` folder (the parent of `shell/`,
 * where this module is): `dist/` when built, `src/` under jest, which runs
 * the sources as ES modules too.
 */
export const SOURCE_ROOT: string = resolve(import.meta.dirname, '..');

/**
 * Defined (as `true`) only by the bundler of the published `termgate`
 * package (scripts/pack-cli.mjs), where this module is bundled into a file
 * of the package's `dist/` (one level below `dist/`, like `dist/chunks/` or
 * `dist/adapters/`), so `SOURCE_ROOT` is that `dist/`.
 */
declare const TERMGATE_PACKAGED: boolean | undefined;
const PACKAGED: boolean = typeof TERMGATE_PACKAGED !== 'undefined' && TERMGATE_PACKAGED === true;

/**
 * Where `policies/` lives: the repository root (`packages/policy/{src,dist}`
 * is three levels below it), or the published package's root (its `dist/`'s parent).
 */
export const REPO_ROOT: string = PACKAGED
  ? resolve(SOURCE_ROOT, '..')
  : resolve(SOURCE_ROOT, '..', '..', '..');

/**
 * What a sandboxed command must not rewrite, as it is the code `serve` runs:
 * the repository, or for the published package the `node_modules` it was
 * installed into (its dependencies are its siblings there), else its root.
 */
export const INSTALL_ROOT: string =
  PACKAGED && basename(dirname(REPO_ROOT)) === 'node_modules' ? dirname(REPO_ROOT) : REPO_ROOT;

/** Absolute path of the shipped developer-workspace policy, `policies/default.yaml`. */
export const DEFAULT_POLICY_PATH: string = resolve(REPO_ROOT, 'policies', 'default.yaml');
