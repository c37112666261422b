import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Language, Parser, type Tree } from 'web-tree-sitter';
import { SOURCE_ROOT } from './module-location.js';

/** A loaded tree-sitter-bash parser. `parse` is synchronous; callers own (and `delete`) the tree. */
export interface BashParser {
  parse(text: string): Tree;
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
        const tree = parser.parse(text);
        if (!tree) throw new Error('tree-sitter returned no tree');
        return tree;
      },
    };
  })().catch((error: unknown) => {
    loading = null;
    throw error;
  });
  return loading;
}
