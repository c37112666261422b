import { checkHostPattern } from '@termgate/termhost';
import type { PolicyIssue } from './policy-error.js';
import { resolvePolicyDir } from './policy-paths.js';
import type { SandboxPolicy } from './policy-types.js';
import type { DocPath } from './yaml-locate.js';

/** The `sandbox` section as the schema admits it. */
export interface RawSandbox {
  mode: 'required' | 'off';
  filesystem?: {
    writable?: string[];
    readOnly?: string[];
    hidden?: string[];
    protectGit?: boolean;
    privateTmp?: boolean;
  };
  network?: 'none' | 'all' | { allow: string[] };
  user?: string;
}

type IssueAt = (at: DocPath, message: string, key?: string) => PolicyIssue;

/** What the schema cannot say: every allowlist entry is a host pattern, and not a bare `*`. */
export function sandboxIssues(raw: RawSandbox | undefined, issue: IssueAt): PolicyIssue[] {
  const network = raw?.network;
  if (typeof network !== 'object') return [];
  const issues: PolicyIssue[] = [];
  network.allow.forEach((pattern, i) => {
    const problem = checkHostPattern(pattern);
    if (problem !== null) issues.push(issue(['sandbox', 'network', 'allow', i], problem));
  });
  return issues;
}

/**
 * The section with its defaults filled in and its paths expanded and made
 * absolute (symlinks resolved where they exist). Without the section the
 * sandbox is off.
 */
export function buildSandboxPolicy(raw: RawSandbox | undefined, policyDir: string): SandboxPolicy {
  if (raw === undefined) return OFF;
  const paths = (written: readonly string[] | undefined, fallback: readonly string[]): readonly string[] =>
    Object.freeze((written ?? fallback).map((p) => resolvePolicyDir(p, policyDir)));
  const fs = raw.filesystem ?? {};
  const network = raw.network ?? 'none';
  return Object.freeze({
    mode: raw.mode,
    writable: paths(fs.writable, [SERVER_CWD]),
    readOnly: paths(fs.readOnly, []),
    hidden: paths(fs.hidden, []),
    protectGit: fs.protectGit ?? true,
    privateTmp: fs.privateTmp ?? true,
    network:
      typeof network === 'string' ? network : Object.freeze({ allow: Object.freeze([...network.allow]) }),
    user: raw.user ?? null,
  });
}

/** The policy placeholder for the directory the server started in. */
const SERVER_CWD = ['$', '{SERVER_CWD}'].join('');

const OFF: SandboxPolicy = Object.freeze({
  mode: 'off',
  writable: Object.freeze([]),
  readOnly: Object.freeze([]),
  hidden: Object.freeze([]),
  protectGit: true,
  privateTmp: true,
  network: 'all',
  user: null,
});
