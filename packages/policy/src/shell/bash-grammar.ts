import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Language, Parser, type Tree } from 'web-tree-sitter';
import { CpuClock } from '../cpu-clock.js';
import { SOURCE_ROOT } from './module-location.js';

/** A loaded tree-sitter-bash parser. `parse` is synchronous; callers own (and `delete`) the tree. */
export interface BashParser {
  /** Throws `ParseBudgetError` when parsing uses more than `PARSE_BUDGET_MS` (see there). */
  parse(text: string): Tree;
}

/**
 * Budget for one parse, in CPU time of the parsing thread. tree-sitter's
 * error recovery is superlinear on some inputs (40 KB of `ls|ls|…|` took
 * 2.7 s and 1.7 GB, 170 KB aborted the wasm module for the rest of the
 * process); a parse that has used the budget is cancelled and the line
 * refused. The parse is checked against the wall clock first (cheap) and,
 * once that has passed the budget, against the thread's CPU time
 * (`CpuClock`): on a loaded machine the wall clock also runs while other
 * processes have the CPU, and a legitimate line must not be refused for
 * the machine's load. Where procfs does not answer, the wall clock decides.
 */
export const PARSE_BUDGET_MS = 150;

/** How often, at least, the CPU time is read again once the wall clock is past the budget: the kernel's tick. */
const CPU_RECHECK_MS = 10;

/** The parsing thread's clock, opened on the first parse (each worker thread has its own module instance). */
let threadClock: CpuClock | null | undefined;

/**
 * A progress callback for `Parser.parse` that cancels (returns true) once
 * the parse has used `budgetMs` of the thread's CPU time; `clock` null
 * means the wall clock alone.
 */
export function parseBudget(budgetMs: number, clock: Pick<CpuClock, 'ms'> | null): () => boolean {
  const started = clock?.ms() ?? null;
  let deadline = performance.now() + budgetMs;
  return () => {
    const now = performance.now();
    if (now <= deadline) return false;
    const used = started === null ? null : (clock?.ms() ?? null);
    if (used === null || started === null) return true;
    const spent = used - started;
    if (spent >= budgetMs) return true;
    deadline = now + Math.max(CPU_RECHECK_MS, budgetMs - spent);
    return false;
  };
}

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
    const language = await Language.load(bashGrammarPath());
    const parser = new Parser();
    parser.setLanguage(language);
    return {
      parse(text: string): Tree {
        if (threadClock === undefined) threadClock = CpuClock.openOwnThread();
        const tree = parser.parse(text, null, {
          progressCallback: parseBudget(PARSE_BUDGET_MS, threadClock),
        });
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
