import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Language, Parser, type Tree } from 'web-tree-sitter';
import { SOURCE_ROOT } from './module-location.js';

/** A loaded tree-sitter-bash parser. `parse` is synchronous; callers own (and `delete`) the tree. */
export interface BashParser {
  /** Throws `ParseBudgetError` when parsing takes longer than `PARSE_BUDGET_MS`. */
  parse(text: string): Tree;
}

/**
 * Wall-clock budget for one parse. tree-sitter's error recovery is
 * superlinear on some inputs (40 KB of `ls|ls|…|` took 2.7 s and 1.7 GB,
 * 170 KB aborted the wasm module for the rest of the process); a parse that
 * runs past the budget is cancelled and the line refused.
 */
export const PARSE_BUDGET_MS = 150;

export class ParseBudgetError extends Error {
  constructor() {
    super(`the parser gave up after ${PARSE_BUDGET_MS} ms`);
    this.name = 'ParseBudgetError';
  }
}

let loading: Promise<BashParser> | null = null;

/** Absolute path of `tree-sitter-bash.wasm`, resolved from this package's own dependencies. */
export function bashGrammarPath(): string {
  const requireHere = createRequire(join(SOURCE_ROOT, 'package-anchor.js'));
  return requireHere.resolve('tree-sitter-bash/tree-sitter-bash.wasm');
}

/**
 * Loads the web-tree-sitter runtime and the bash grammar once per process
 * (about 35 ms) and returns the shared parser. Concurrent callers share one
 * load; a failed load is retried by the next caller.
 */
export function loadBashParser(): Promise<BashParser> {
  loading ??= (async () => {
    await Parser.init();
    // Bytes, not a path: with a path web-tree-sitter does a dynamic import(), which jest's CommonJS runtime refuses.
    const language = await Language.load(await readFile(bashGrammarPath()));
    const parser = new Parser();
    parser.setLanguage(language);
    return {
      parse(text: string): Tree {
        const deadline = performance.now() + PARSE_BUDGET_MS;
        const tree = parser.parse(text, null, { progressCallback: () => performance.now() > deadline });
        if (!tree) {
          // A cancelled parse would otherwise resume on the next call, with the next text.
          parser.reset();
          throw new ParseBudgetError();
        }
        return tree;
      },
    };
  })().catch((error: unknown) => {
    loading = null;
    throw error;
  });
  return loading;
}
