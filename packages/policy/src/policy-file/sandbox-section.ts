import { isAbsolute, resolve } from 'node:path';
import { checkHostPattern } from '@termgate/termhost';
import { HOOKS_PATH_ENTRY, RUN_LATER_SET } from '../sandbox/run-later.js';
import { DEFAULT_ALLOWLISTED_TREES, DEFAULT_READABLE } from '../sandbox/view-defaults.js';
import type { PolicyIssue } from './policy-error.js';
import { expandPolicyPath, resolvePolicyDir } from './policy-paths.js';
import type { SandboxPolicy } from './policy-types.js';
import type { DocPath } from './yaml-locate.js';

/** The `sandbox` section as the schema admits it. */
export interface RawSandbox {
  mode: 'required' | 'off';
  tier?: 'auto' | 'namespaces' | 'landlock';
  filesystem?: {
    writable?: string[];
    readOnly?: string[];
    hidden?: string[];
    protectGit?: boolean;
    privateTmp?: boolean;
    allowlistedTrees?: string[];
    readable?: string[];
    runLater?: {
      add?: { path: string; reason: string }[];
      remove?: { path: string; reason: string }[];
    };
  };
  network?: 'none' | 'all' | { allow: string[] };
  user?: string;
  unixSockets?: { allow?: string[] };
}

type IssueAt = (at: DocPath, message: string, key?: string) => PolicyIssue;

/** What the schema cannot say: every allowlist entry is a host pattern, and not a bare `*`. */
export function sandboxIssues(raw: RawSandbox | undefined, issue: IssueAt): PolicyIssue[] {
  const issues: PolicyIssue[] = [];
  const network = raw?.network;
  if (typeof network === 'object') {
    network.allow.forEach((pattern, i) => {
      const problem = checkHostPattern(pattern);
      if (problem !== null) issues.push(issue(['sandbox', 'network', 'allow', i], problem));
    });
  }
  const runLater = raw?.filesystem?.runLater;
  const at = (key: string, i: number): DocPath => ['sandbox', 'filesystem', 'runLater', key, i, 'path'];
  (runLater?.add ?? []).forEach((entry, i) => {
    const problem = relativeEntryProblem(entry.path);
    if (problem !== null) issues.push(issue(at('add', i), problem));
  });
  const known = new Set([...RUN_LATER_SET.map((e) => e.path), HOOKS_PATH_ENTRY]);
  (runLater?.remove ?? []).forEach((entry, i) => {
    if (!known.has(entry.path)) {
      issues.push(
        issue(at('remove', i), `${entry.path} is not in the run-later set (${[...known].join(', ')})`),
      );
    }
  });
  return issues;
}

/** Why a `runLater.add` path is not a name inside a project directory, or null. */
function relativeEntryProblem(path: string): string | null {
  if (isAbsolute(path) || path.startsWith('~') || path.includes('$')) {
    return 'a run-later path is relative to each project directory (for an absolute path, use readOnly)';
  }
  if (path.split('/').some((part) => part === '..' || part === '.'))
    return 'a run-later path may not contain . or ..';
  return null;
}

/**
 * The section with its defaults filled in and its paths expanded and made
 * absolute (symlinks resolved where they exist). Without the section the
 * sandbox is off.
 */
export function buildSandboxPolicy(raw: RawSandbox | undefined, policyDir: string): SandboxPolicy {
  if (raw === undefined) return OFF;
  const paths = (
    written: readonly string[] | undefined,
    fallback: readonly string[],
    markDirectories = false,
  ): readonly string[] =>
    Object.freeze(
      (written ?? fallback).map((p) => {
        // readOnly: a trailing slash marks a directory, for a path that does not exist yet.
        const resolved = resolvePolicyDir(p, policyDir);
        return markDirectories && p.endsWith('/') && resolved !== '/' ? `${resolved}/` : resolved;
      }),
    );
  const fs = raw.filesystem ?? {};
  const network = raw.network ?? 'none';
  return Object.freeze({
    mode: raw.mode,
    tier: raw.tier ?? 'auto',
    writable: paths(fs.writable, [SERVER_CWD]),
    readOnly: paths(fs.readOnly, [], true),
    hidden: paths(fs.hidden, []),
    protectGit: fs.protectGit ?? true,
    privateTmp: fs.privateTmp ?? true,
    network:
      typeof network === 'string' ? network : Object.freeze({ allow: Object.freeze([...network.allow]) }),
    user: raw.user ?? null,
    allowlistedTrees: paths(fs.allowlistedTrees, DEFAULT_ALLOWLISTED_TREES),
    // Not resolved: a toolchain directory that is a link is shown at its own path, from its target.
    readable: Object.freeze((fs.readable ?? DEFAULT_READABLE).map((p) => absolutePolicyPath(p, policyDir))),
    unixSockets: Object.freeze({
      allow: Object.freeze((raw.unixSockets?.allow ?? []).map((p) => absolutePolicyPath(p, policyDir))),
    }),
    runLater: Object.freeze({
      add: Object.freeze([...(fs.runLater?.add ?? [])]),
      remove: Object.freeze([...(fs.runLater?.remove ?? [])]),
    }),
  });
}

/** A path written in a policy, expanded and made absolute, symlinks left as they are. */
function absolutePolicyPath(written: string, policyDir: string): string {
  const path = expandPolicyPath(written);
  return isAbsolute(path) ? resolve(path) : resolve(policyDir, path);
}

/** The policy placeholder for the directory the server started in. */
const SERVER_CWD = ['$', '{SERVER_CWD}'].join('');

const OFF: SandboxPolicy = Object.freeze({
  mode: 'off',
  tier: 'auto',
  writable: Object.freeze([]),
  readOnly: Object.freeze([]),
  hidden: Object.freeze([]),
  protectGit: true,
  privateTmp: true,
  network: 'all',
  user: null,
  allowlistedTrees: Object.freeze([]),
  readable: Object.freeze([]),
});
