import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { ErrorObject } from 'ajv';
import { type Document, LineCounter, parseDocument } from 'yaml';
import type { Verdict } from '../decision.js';
import { unbalancedGlob } from './glob-syntax.js';
import { ENV_DENY_FLOOR, globToRegExp, matchesAny } from './name-glob.js';
import { PolicyError, type PolicyIssue } from './policy-error.js';
import { EXAMPLE_WORKSPACE, expandPolicyPath, realpathOrNull, resolvePolicyDir } from './policy-paths.js';
import type {
  EnvPolicy,
  LoadedPolicy,
  PolicyRule,
  PolicyTest,
  WritePattern,
  WritesPolicy,
} from './policy-types.js';
import { buildSandboxPolicy, type RawSandbox, sandboxIssues } from './sandbox-section.js';
import { validatePolicySchema } from './schema-validator.js';
import { type DocPath, formatPath, locate, parseInstancePath, toPosition } from './yaml-locate.js';

/** Inherited when a policy has no `env.inherit`: enough to run ordinary tools, no secrets. */
const DEFAULT_INHERIT = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LC_*', 'TERM', 'TMPDIR', 'TZ'];

/**
 * Reads, validates and resolves a policy file. Throws `PolicyError`:
 * `POLICY_UNREADABLE` when the file cannot be read, `POLICY_INVALID` (with
 * every issue located by line and column) when it is not a valid policy.
 * Never returns a partial or empty policy.
 */
export async function loadPolicyFile(path: string): Promise<LoadedPolicy> {
  const absolute = resolve(path);
  let bytes: Buffer;
  try {
    bytes = await readFile(absolute);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new PolicyError('POLICY_UNREADABLE', `cannot read policy file ${absolute}: ${reason}`);
  }
  return parsePolicyBytes(bytes, absolute);
}

/** Like `loadPolicyFile` for text already in memory; `path` names it in errors and anchors relative paths. */
export function parsePolicyText(text: string, path: string): LoadedPolicy {
  return parsePolicyBytes(Buffer.from(text, 'utf8'), resolve(path));
}

interface RawRule {
  id: string;
  decision: Verdict;
  reason?: string;
  program?: string | string[];
  argvPrefix?: string[][];
  argvContains?: string | string[];
  glob?: string | string[];
  regex?: string | string[];
  cwd?: string | string[];
  path?: string | string[];
  match?: string | string[];
  notMatch?: string | string[];
}

interface RawPolicy {
  default: Verdict;
  allowDynamic?: boolean;
  rules?: RawRule[];
  limits?: LoadedPolicy['limits'];
  cwd?: { roots?: string[] };
  env?: Partial<Record<keyof EnvPolicy, string[]>>;
  writes?: { default?: Verdict; allow?: string[]; deny?: string[] };
  sandbox?: RawSandbox;
  tests?: {
    command: string;
    args?: string[];
    cwd?: string;
    env?: Record<string, string>;
    expect: Verdict;
    rule?: string;
  }[];
}

function parsePolicyBytes(bytes: Buffer, path: string): LoadedPolicy {
  const text = bytes.toString('utf8');
  const lines = new LineCounter();
  const doc = parseDocument(text, {
    lineCounter: lines,
    prettyErrors: false,
    uniqueKeys: true,
  });
  const issue = (at: DocPath, message: string, key?: string): PolicyIssue => {
    const { line, column } = locate(doc, lines, at, key);
    return { file: path, line, column, key: formatPath(key === undefined ? at : [...at, key]), message };
  };
  if (doc.errors.length > 0) {
    const issues = doc.errors.map((e): PolicyIssue => {
      const { line, column } = toPosition(lines, e.pos[0]);
      return { file: path, line, column, key: '', message: `YAML: ${e.message.split('\n')[0]}` };
    });
    throw new PolicyError('POLICY_INVALID', `invalid policy file ${path}`, issues);
  }
  const data: unknown = doc.toJS();
  const schemaIssues = schemaErrorsToIssues(validatePolicySchema(data), issue);
  if (schemaIssues.length > 0)
    throw new PolicyError('POLICY_INVALID', `invalid policy file ${path}`, schemaIssues);
  const raw = data as RawPolicy;
  const semantic = semanticIssues(raw, issue);
  if (semantic.length > 0) throw new PolicyError('POLICY_INVALID', `invalid policy file ${path}`, semantic);
  return build(raw, doc, lines, path, text, createHash('sha256').update(bytes).digest('hex'));
}

type IssueAt = (at: DocPath, message: string, key?: string) => PolicyIssue;

function schemaErrorsToIssues(errors: readonly ErrorObject[], issue: IssueAt): PolicyIssue[] {
  const issues: PolicyIssue[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    // The branches of a oneOf explain themselves badly; the oneOf error says it once.
    if (e.schemaPath.includes('/oneOf/')) continue;
    const at = parseInstancePath(e.instancePath);
    const prefixAt = at.indexOf('argvPrefix');
    let item: PolicyIssue;
    if (prefixAt !== -1 && at[0] === 'rules') {
      item = issue(at.slice(0, prefixAt + 1), ARGV_PREFIX_SHAPE);
    } else if (e.keyword === 'additionalProperties') {
      const key = String((e.params as { additionalProperty: string }).additionalProperty);
      const allowed = Object.keys((e.parentSchema as { properties?: object } | undefined)?.properties ?? {});
      item = issue(
        at,
        `unknown key "${key}"${allowed.length ? ` (allowed: ${allowed.join(', ')})` : ''}`,
        key,
      );
    } else if (e.keyword === 'required') {
      item = issue(at, `missing required key "${(e.params as { missingProperty: string }).missingProperty}"`);
    } else if (e.keyword === 'enum') {
      item = issue(
        at,
        `must be one of: ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`,
      );
    } else if (e.keyword === 'oneOf') {
      const last = at[at.length - 1];
      item = issue(
        at,
        last === 'argvPrefix'
          ? 'must be a list of words, or a list of such lists'
          : last === 'network'
            ? 'must be none, all, or {allow: [host, …]}'
            : 'must be a non-empty string or a non-empty list of non-empty strings',
      );
    } else {
      item = issue(at, e.message ?? e.keyword);
    }
    const dedupe = `${item.key}|${item.message}`;
    if (!seen.has(dedupe)) {
      seen.add(dedupe);
      issues.push(item);
    }
  }
  return issues;
}

/** Why a flat `argvPrefix: [status, log]` is refused: it would read as alternatives but mean one prefix. */
const ARGV_PREFIX_SHAPE =
  'argvPrefix must be a list of lists of words. For alternatives write `argvPrefix: [[status], [log], [diff]]` (status, or log, or diff); for one prefix of several words write `argvPrefix: [[commit, -m]]`';

const MATCHERS = ['program', 'argvPrefix', 'argvContains', 'glob', 'regex', 'cwd', 'path'] as const;

function semanticIssues(raw: RawPolicy, issue: IssueAt): PolicyIssue[] {
  const issues: PolicyIssue[] = [];
  const ids = new Map<string, number>();
  raw.rules?.forEach((rule, i) => {
    const first = ids.get(rule.id);
    if (first !== undefined)
      issues.push(issue(['rules', i, 'id'], `duplicate rule id "${rule.id}" (first at rules[${first}])`));
    else ids.set(rule.id, i);
    if (!MATCHERS.some((m) => rule[m] !== undefined)) {
      issues.push(
        issue(['rules', i], `rule "${rule.id}" has no matcher (need one of: ${MATCHERS.join(', ')})`),
      );
    }
    list(rule.regex).forEach((source, k) => {
      try {
        new RegExp(`^(?:${source})$`, 'u');
      } catch (error) {
        const at: DocPath = typeof rule.regex === 'string' ? ['rules', i, 'regex'] : ['rules', i, 'regex', k];
        issues.push(issue(at, `invalid regex: ${(error as Error).message}`));
      }
    });
    list(rule.path).forEach((pattern, k) => {
      const expanded = expandPolicyPath(pattern);
      const at: DocPath = typeof rule.path === 'string' ? ['rules', i, 'path'] : ['rules', i, 'path', k];
      const malformed = unbalancedGlob(pattern);
      if (malformed !== null) {
        issues.push(
          issue(at, `path pattern "${pattern}" is malformed: ${malformed} (it would match nothing)`),
        );
      }
      if (!isAbsolute(expanded) && !expanded.startsWith('**/')) {
        issues.push(
          issue(
            at,
            `path pattern "${pattern}" must be absolute (or start with \${SERVER_CWD}, \${HOME}, \${TMPDIR}, ~ or **/)`,
          ),
        );
      }
    });
  });
  for (const list of ['allow', 'deny'] as const) {
    raw.writes?.[list]?.forEach((pattern, i) => {
      const expanded = expandPolicyPath(pattern);
      const malformed = unbalancedGlob(pattern);
      if (malformed !== null) {
        issues.push(issue(['writes', list, i], `write pattern "${pattern}" is malformed: ${malformed}`));
      }
      if (!isAbsolute(expanded) && !expanded.startsWith('*')) {
        issues.push(
          issue(
            ['writes', list, i],
            `write pattern "${pattern}" must be absolute (or start with \${SERVER_CWD}, \${HOME}, \${TMPDIR}, ~ or *)`,
          ),
        );
      }
    });
  }
  issues.push(...sandboxIssues(raw.sandbox, issue));
  raw.tests?.forEach((test, i) => {
    if (test.rule !== undefined && !ids.has(test.rule) && !isWriteRuleId(test.rule, raw)) {
      issues.push(issue(['tests', i, 'rule'], `unknown rule id "${test.rule}"`));
    }
  });
  return issues;
}

/** `writes.default`, `writes.allow[i]`, `writes.deny[i]` of an existing pattern. */
function isWriteRuleId(id: string, raw: RawPolicy): boolean {
  if (id === 'writes.default') return true;
  const m = /^writes\.(allow|deny)\[(\d+)\]$/.exec(id);
  return m !== null && Number(m[2]) < (raw.writes?.[m[1] as 'allow' | 'deny']?.length ?? 0);
}

function list<T>(value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

function build(
  raw: RawPolicy,
  doc: Document,
  lines: LineCounter,
  path: string,
  text: string,
  sha256: string,
): LoadedPolicy {
  const dir = dirname(path);
  const position = (at: DocPath) => locate(doc, lines, at);
  const rules = (raw.rules ?? []).map((r, i): PolicyRule => {
    const prefixes = r.argvPrefix;
    return {
      id: r.id,
      decision: r.decision,
      ...(r.reason !== undefined ? { reason: r.reason } : {}),
      ...(r.program !== undefined ? { program: list(r.program) } : {}),
      ...(prefixes ? { argvPrefix: prefixes } : {}),
      ...(r.argvContains !== undefined ? { argvContains: list(r.argvContains) } : {}),
      ...(r.glob !== undefined ? { glob: list(r.glob) } : {}),
      ...(r.regex !== undefined ? { regex: list(r.regex) } : {}),
      ...(r.cwd !== undefined
        ? {
            cwd: list(r.cwd).map((d) => resolvePolicyDir(d, dir)),
            exampleCwd: list(r.cwd).map((d) => resolvePolicyDir(d, dir, EXAMPLE_WORKSPACE)),
          }
        : {}),
      ...(r.path !== undefined ? { path: list(r.path) } : {}),
      ...(r.match !== undefined ? { match: list(r.match) } : {}),
      ...(r.notMatch !== undefined ? { notMatch: list(r.notMatch) } : {}),
      position: position(['rules', i]),
    };
  });
  const cwdRoots = raw.cwd?.roots ? raw.cwd.roots.map((d) => resolvePolicyDir(d, dir)) : null;
  const env: EnvPolicy = {
    inherit: raw.env?.inherit ?? DEFAULT_INHERIT,
    allowClientSet: raw.env?.allowClientSet ?? [],
    deny: raw.env?.deny ?? [],
  };
  const patterns = (key: 'allow' | 'deny'): WritePattern[] =>
    (raw.writes?.[key] ?? []).map((pattern, i) => ({
      id: `writes.${key}[${i}]`,
      pattern,
      matchers: writeMatchers(pattern),
      position: position(['writes', key, i]),
    }));
  const writes: WritesPolicy = {
    // Absent, writes follow the policy's default: `default: deny` alone does not leave writes open.
    default: raw.writes?.default ?? raw.default,
    allow: patterns('allow'),
    deny: patterns('deny'),
  };
  const defaultCwd = cwdRoots?.[0] ?? dir;
  const tests = (raw.tests ?? []).map(
    (t, i): PolicyTest => ({
      command: t.command,
      args: t.args ?? null,
      cwd: t.cwd !== undefined ? resolvePolicyDir(t.cwd, dir) : defaultCwd,
      env: t.env ?? {},
      expect: t.expect,
      ...(t.rule !== undefined ? { rule: t.rule } : {}),
      position: position(['tests', i]),
    }),
  );
  const inherit = env.inherit.map(globToRegExp);
  const floor = ENV_DENY_FLOOR.map(globToRegExp);
  return Object.freeze({
    path,
    sha256,
    text,
    default: raw.default,
    allowDynamic: raw.allowDynamic ?? false,
    rules,
    limits: { ...raw.limits },
    cwdRoots,
    env,
    writes,
    tests,
    sandbox: buildSandboxPolicy(raw.sandbox, dir),
    inheritedEnv(serverEnv: NodeJS.ProcessEnv): Record<string, string> {
      const out: Record<string, string> = {};
      for (const [name, value] of Object.entries(serverEnv)) {
        if (value !== undefined && matchesAny(name, inherit) && !matchesAny(name, floor)) out[name] = value;
      }
      return out;
    },
  });
}

/**
 * A write pattern compiled against the paths the engine resolves: as
 * written (placeholders expanded), and with its literal directory prefix
 * realpath'd when that exists (`/tmp/**` → `/private/tmp/**` on macOS).
 */
function writeMatchers(pattern: string): RegExp[] {
  const expanded = expandPolicyPath(pattern);
  const forms = [expanded];
  if (isAbsolute(expanded)) {
    const wild = expanded.search(/[*?[]/);
    const literal = wild === -1 ? expanded : expanded.slice(0, expanded.lastIndexOf('/', wild));
    const real = literal === '' ? null : realpathOrNull(literal);
    if (real !== null && real !== literal) forms.push(real + expanded.slice(literal.length));
  }
  return forms.map(globToRegExp);
}
