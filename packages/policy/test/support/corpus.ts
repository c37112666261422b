import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';

export interface CorpusEntry {
  readonly line: string;
  readonly expect: 'allow' | 'deny';
  /** Safe to run under bash with logging shims on PATH. */
  readonly exec?: boolean;
  /** For a deny: the rule id(s) it comes from, `default` or `refused` (see the corpus header). */
  readonly by?: string | readonly string[];
  /** For `by: refused`: the start of the first refusal. */
  readonly why?: string;
}

export const REPO_ROOT = resolve(import.meta.dirname, '..', '..', '..', '..');
export const STRICT_POLICY = join(REPO_ROOT, 'examples', 'strict-enterprise.yaml');
export const DEFAULT_POLICY = join(REPO_ROOT, 'policies', 'default.yaml');

/** The decision corpus for the strict example policy. */
export function readCorpus(): CorpusEntry[] {
  return parse(
    readFileSync(join(import.meta.dirname, '..', 'corpus', 'strict-enterprise.corpus.yaml'), 'utf8'),
  ) as CorpusEntry[];
}
