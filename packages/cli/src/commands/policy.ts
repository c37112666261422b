import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import {
  type CommandRequest,
  createLayeredEngine,
  createPolicyEngine,
  type Explanation,
  INSTALL_ROOT,
  type LayeredPolicyEngine,
  type LoadedPolicy,
  lintPolicy,
  loadPolicyFile,
  managedPolicyPath,
  type PolicyDecision,
  PolicyError,
  type PolicyLayerName,
  runPolicyTests,
  SandboxProfiler,
  sandboxProfileSha256,
} from '@termgate/policy';
import type { SandboxProfile } from '@termgate/termhost';
import { defaultAuditPath } from '../serve/default-audit-path.js';
import type { CliCommand, CliIo } from './cli-io.js';
import { printUsage, reportUsageError, UsageError, usageErrorFrom, wantsHelp } from './usage.js';

export const POLICY_USAGE = `Usage:
  termgate policy check FILE                 validate a policy file (and its rules' match:/notMatch:
                                             examples); footguns are printed as warnings on stderr
  termgate policy test FILE                  run the policy's embedded tests
  termgate policy explain FILE [--json] [--cwd DIR] [--env NAME=VALUE]... [--argv] -- COMMAND LINE
                                             judge one command line (--argv: the words are argv, no shell)
  termgate policy explain FILE --json        batch: JSON Lines {"command", "args"?, "cwd"?, "env"?} on stdin,
                                             one decision object per line on stdout, in order
  termgate policy [SUBCOMMAND] -h|--help     print this help
Each subcommand takes --managed-policy FILE, as serve does: the managed layer over FILE where the
system has none; /etc/termgate/managed.yaml is in force whenever it exists. Under a managed layer,
check and test also run its tests on the layered result and warn where FILE tries to loosen it,
and explain says which layer decided.
Exit status: 0 ok/allowed, 1 invalid/failed/denied, 2 usage error, 3 (explain) approval needed: ask.
`;

/** `policy explain`'s exit status per decision. */
const EXPLAIN_EXIT = { allow: 0, deny: 1, ask: 3 } as const;

/** `termgate policy …`: argv starts after the word `policy`. */
export const policyCommand: CliCommand = async (argv, io) => {
  const [sub, ...rest] = argv;
  if (sub !== undefined && ['check', 'test', 'explain'].includes(sub) && wantsHelp(rest)) {
    return printUsage(io, POLICY_USAGE);
  }
  try {
    switch (sub) {
      case 'check':
        return await check(rest, io);
      case 'test':
        return await test(rest, io);
      case 'explain':
        return await explain(rest, io);
      case '-h':
      case '--help':
      case 'help':
        return printUsage(io, POLICY_USAGE);
      case undefined:
        throw new UsageError('missing subcommand: check, test or explain');
      default:
        throw new UsageError(`unknown subcommand "${sub}"`);
    }
  } catch (error) {
    if (error instanceof PolicyError) {
      io.stderr.write(`${error.message}\n`);
      return 1;
    }
    if (error instanceof UsageError) {
      const known = sub !== undefined && ['check', 'test', 'explain'].includes(sub);
      return reportUsageError(io, known ? `policy ${sub}` : 'policy', error.message);
    }
    throw error;
  }
};

function parse(args: readonly string[], options: NonNullable<ParseArgsConfig['options']> = {}) {
  try {
    return parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
  } catch (error) {
    throw usageErrorFrom(error);
  }
}

function fileArg(positionals: readonly string[]): string {
  const file = positionals[0];
  if (file === undefined) throw new UsageError('missing FILE');
  return file;
}

const MANAGED_OPTION = { 'managed-policy': { type: 'string' } } as const;

/** The managed layer in force for `values` (`--managed-policy`, or the system file), loaded; null when none. */
async function managedLayer(values: { readonly 'managed-policy'?: unknown }): Promise<LoadedPolicy | null> {
  const requested = typeof values['managed-policy'] === 'string' ? values['managed-policy'] : null;
  let path: string | null;
  try {
    path = managedPolicyPath(requested === null ? null : resolve(requested));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  return path === null ? null : loadPolicyFile(path);
}

/** Under a managed layer: its tests on the layered result, and where the workspace tries to loosen it (warnings). */
function reportLayers(layered: LayeredPolicyEngine, io: CliIo): number {
  const { managed, workspace } = layered.layers;
  for (const l of layered.loosenings()) {
    io.stderr.write(`warning: ${workspace.path}: ${l.key}: ${l.message} [loosens-managed]\n`);
  }
  const report = layered.managedTests();
  for (const r of report.results.filter((r) => !r.passed)) {
    io.stderr.write(
      `${managed.path}:${r.test.position.line}:${r.test.position.column}: ${testLabel(r.test)}: ${r.failure} with ${workspace.path} added (${r.decision.reason})\n`,
    );
  }
  if (report.failed > 0) {
    io.stderr.write(
      `${managed.path}: ${report.failed} of ${report.results.length} managed test(s) failed on the layered result; serve refuses these policies together\n`,
    );
  }
  return report.failed;
}

async function check(args: readonly string[], io: CliIo): Promise<number> {
  const { positionals, values } = parse(args, MANAGED_OPTION);
  if (positionals.length !== 1) throw new UsageError('check takes exactly one FILE');
  const policy = await loadPolicyFile(fileArg(positionals));
  const managed = await managedLayer(values);
  // Creating the engine checks every rule's match:/notMatch: examples; the
  // embedded tests run too, since `serve` refuses a policy whose tests fail.
  const report = runPolicyTests(await createPolicyEngine(policy), policy);
  const layered = managed === null ? null : await createLayeredEngine(managed, policy);
  const managedFailed = layered === null ? 0 : reportLayers(layered, io);
  if (managedFailed > 0 && report.failed === 0) return 1;
  if (report.failed > 0) {
    for (const r of report.results.filter((r) => !r.passed)) {
      io.stderr.write(
        `${policy.path}:${r.test.position.line}:${r.test.position.column}: ${testLabel(r.test)}: ${r.failure} (${r.decision.reason})\n`,
      );
    }
    io.stderr.write(
      `${policy.path}: ${report.failed} of ${report.results.length} embedded test(s) failed; serve refuses this policy (termgate policy test shows every test)\n`,
    );
    return 1;
  }
  io.stdout.write(
    `ok: ${policy.path}: default ${policy.default}, ${policy.rules.length} rule(s), ${policy.tests.length} test(s) passed, sha256 ${policy.sha256}\n`,
  );
  if (managed !== null) {
    io.stdout.write(
      `managed: ${managed.path}: default ${managed.default}, ${managed.rules.length} rule(s), ${managed.tests.length} test(s) passed on the layered result, sha256 ${managed.sha256}\n`,
    );
  }
  io.stdout.write(`${sandboxSummary(layered?.layers.effective ?? policy)}\n`);
  for (const w of lintPolicy(policy, { auditPath: defaultAuditPath() })) {
    const where = w.position
      ? `${policy.path}:${w.position.line}:${w.position.column}: `
      : `${policy.path}: `;
    io.stderr.write(`warning: ${where}${w.message} [${w.code}]\n`);
  }
  return 0;
}

async function test(args: readonly string[], io: CliIo): Promise<number> {
  const { positionals, values } = parse(args, MANAGED_OPTION);
  if (positionals.length !== 1) throw new UsageError('test takes exactly one FILE');
  const policy = await loadPolicyFile(fileArg(positionals));
  const managed = await managedLayer(values);
  const report = runPolicyTests(await createPolicyEngine(policy), policy);
  const managedFailed = managed === null ? 0 : reportLayers(await createLayeredEngine(managed, policy), io);
  for (const r of report.results) {
    const where = `${policy.path}:${r.test.position.line}:${r.test.position.column}`;
    const what = testLabel(r.test);
    io.stdout.write(
      r.passed
        ? `PASS ${where} ${what} → ${r.decision.decision}\n`
        : `FAIL ${where} ${what}: ${r.failure} (${r.decision.reason})\n`,
    );
  }
  io.stdout.write(`${report.passed} passed, ${report.failed} failed\n`);
  return report.failed === 0 && managedFailed === 0 ? 0 : 1;
}

function testLabel(test: LoadedPolicy['tests'][number]): string {
  return test.args ? JSON.stringify([test.command, ...test.args]) : JSON.stringify(test.command);
}

/** The sandbox line of `policy check`: its mode and, with an allowlist, the hosts it lets through. */
function sandboxSummary(policy: LoadedPolicy): string {
  if (policy.sandbox.mode !== 'required') return `sandbox: ${policy.sandbox.mode}`;
  return `sandbox: required; network: ${networkText(policy.sandbox.network)}`;
}

/** The network a sandboxed command gets, hosts named. */
function networkText(network: LoadedPolicy['sandbox']['network']): string {
  if (typeof network === 'string') return network;
  return `allowlist, through the proxy: ${network.allow.length > 0 ? network.allow.join(', ') : '(no host)'}`;
}

async function explain(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, {
    json: { type: 'boolean' },
    argv: { type: 'boolean' },
    cwd: { type: 'string' },
    env: { type: 'string', multiple: true },
    ...MANAGED_OPTION,
  });
  const file = fileArg(positionals);
  const words = positionals.slice(1);
  const workspace = await loadPolicyFile(file);
  const managed = await managedLayer(values);
  const engine = await explainer(workspace, managed);
  const policy = engine.policy;
  if (words.length === 0) {
    if (!values.json)
      throw new UsageError('explain needs -- COMMAND LINE (or --json for JSON Lines on stdin)');
    return batch(engine, io);
  }
  const env: Record<string, string> = {};
  for (const pair of (values.env as string[] | undefined) ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--env expects NAME=VALUE, got "${pair}"`);
    env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  const request: CommandRequest = values.argv
    ? {
        command: words[0]!,
        args: words.slice(1),
        cwd: (values.cwd as string | undefined) ?? process.cwd(),
        env,
      }
    : { command: words.join(' '), args: null, cwd: (values.cwd as string | undefined) ?? process.cwd(), env };
  const shown = engine.explain(request);
  const sandbox = withTier(sandboxOf(policy, shown.decision, managed), policy);
  io.stdout.write(
    values.json
      ? `${JSON.stringify({ ...toJson(shown), ...(sandbox && { sandbox }) })}\n`
      : toText(shown) + sandboxText(sandbox, policy),
  );
  return EXPLAIN_EXIT[shown.decision.decision];
}

/** What `explain` shows: the decision, and each layer's verdicts (one section without a managed layer). */
interface Shown {
  readonly decision: PolicyDecision;
  readonly sections: readonly {
    readonly layer: PolicyLayerName | null;
    readonly policy: LoadedPolicy;
    readonly explanation: Explanation;
  }[];
}

interface Explainer {
  /** The policy enforced besides the judge (under a managed layer, the merged one). */
  readonly policy: LoadedPolicy;
  explain(request: CommandRequest): Shown;
}

async function explainer(workspace: LoadedPolicy, managed: LoadedPolicy | null): Promise<Explainer> {
  if (managed === null) {
    const engine = await createPolicyEngine(workspace);
    return {
      policy: workspace,
      explain: (request) => {
        const explanation = engine.explain(request);
        return {
          decision: explanation.decision,
          sections: [{ layer: null, policy: workspace, explanation }],
        };
      },
    };
  }
  const layered = await createLayeredEngine(managed, workspace);
  return {
    policy: layered.layers.effective,
    explain: (request) => {
      const e = layered.explain(request);
      const managedSection = { layer: 'managed' as const, policy: managed, explanation: e.managed };
      const workspaceSection = { layer: 'workspace' as const, policy: workspace, explanation: e.workspace };
      return {
        decision: e.decision,
        sections:
          e.decision.layer === 'managed'
            ? [managedSection, workspaceSection]
            : [workspaceSection, managedSection],
      };
    },
  };
}

/** One decision object per input line, in order; a bad line yields `{"line": n, "error": …}`. */
async function batch(engine: Explainer, io: CliIo): Promise<number> {
  const lines = createInterface({ input: io.stdin, crlfDelay: Number.POSITIVE_INFINITY });
  let n = 0;
  for await (const text of lines) {
    n++;
    if (text.trim() === '') continue;
    let out: object;
    try {
      out = toJson(engine.explain(toRequest(JSON.parse(text))));
    } catch (error) {
      out = { line: n, error: (error as Error).message };
    }
    io.stdout.write(`${JSON.stringify(out)}\n`);
  }
  return 0;
}

function toRequest(value: unknown): CommandRequest {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error('expected a JSON object');
  const { command, args, cwd, env } = value as Record<string, unknown>;
  if (typeof command !== 'string') throw new Error('"command" must be a string');
  if (
    args !== undefined &&
    args !== null &&
    !(Array.isArray(args) && args.every((a) => typeof a === 'string'))
  ) {
    throw new Error('"args" must be an array of strings');
  }
  if (cwd !== undefined && typeof cwd !== 'string') throw new Error('"cwd" must be a string');
  if (
    env !== undefined &&
    (typeof env !== 'object' || env === null || Object.values(env).some((v) => typeof v !== 'string'))
  ) {
    throw new Error('"env" must be an object of strings');
  }
  return {
    command,
    args: (args as string[] | undefined) ?? null,
    cwd: (cwd as string | undefined) ?? process.cwd(),
    env: (env as Record<string, string> | undefined) ?? {},
  };
}

function toJson(shown: Shown): object {
  const e = shown.sections[0]!.explanation;
  return {
    ...shown.decision,
    problems: e.analysis.problems.map((p) => ({
      kind: p.kind,
      message: p.message,
      range: p.range,
      via: p.via,
    })),
  };
}

function toText(shown: Shown): string {
  const d = shown.decision;
  const [first] = shown.sections;
  const e = first!.explanation;
  const lines = [
    `decision: ${d.decision}`,
    ...(first!.layer === null ? [] : [`layer:    ${first!.layer} (${first!.policy.path})`]),
    `rules:    ${d.ruleIds.length ? d.ruleIds.join(', ') : `(none: default ${first!.policy.default})`}`,
    `reason:   ${d.reason}`,
    `cwd:      ${d.resolvedCwd ?? '(unresolved)'}`,
    ...shown.sections.flatMap((section) => [
      section.layer === null ? 'commands:' : `commands, ${section.layer} layer (${section.policy.path}):`,
      ...verdictLines(section.explanation, section.layer !== null),
    ]),
  ];
  if (e.analysis.problems.length > 0) {
    lines.push('cannot judge:', ...e.analysis.problems.map((p) => `  ${p.kind}: ${p.message}`));
  }
  return `${lines.join('\n')}\n`;
}

/** Each command's verdict; with `refusals`, the line-level ones too (a layer's cwd, env, dynamic constructs). */
function verdictLines(e: Explanation, refusals: boolean): string[] {
  return [
    ...e.verdicts.map((v) => {
      const via = v.command.via.length ? `  [via ${v.command.via.join(' > ')}]` : '';
      const rules = v.rules.length
        ? v.rules.map((r) => `${r.id} (line ${r.position.line})`).join(', ')
        : 'default';
      const writes = (v.command.redirects ?? []).map(
        (r) =>
          `\n        writes ${r.descriptor ?? ''}${r.operator} ${r.literal ? JSON.stringify(r.path ?? r.target) : `${r.target} (dynamic)`}`,
      );
      return `  ${v.decision.padEnd(5)} ${JSON.stringify(v.command.argv)}${via}  ← ${rules}${writes.join('')}`;
    }),
    ...(refusals ? e.refusals.map((r) => `  refused: ${r}`) : []),
  ];
}

interface ExplainedSandbox {
  readonly sha256: string;
  readonly profile: SandboxProfile;
  /** `sandbox.tier`, and which tier it takes. */
  readonly tier?: { readonly setting: string; readonly takes: string };
}

/**
 * `sandbox` with its tier (docs/SANDBOX-TIERS.md): what `sandbox.tier` allows. Which one
 * `auto` takes depends on the machine `serve` runs on: it probes, and names it in server-start.
 */
function withTier(sandbox: ExplainedSandbox | null, policy: LoadedPolicy): ExplainedSandbox | null {
  if (sandbox === null) return null;
  const setting = policy.sandbox.tier ?? 'auto';
  const here = {
    auto:
      (policy.sandbox.unixSockets?.allow.length ?? 0) > 0
        ? 'namespaces only (unixSockets.allow needs them): serve refuses to start where user namespaces are refused'
        : 'namespaces (bubblewrap) where user namespaces work, else landlock (Landlock + seccomp); serve records which in server-start',
    namespaces: 'namespaces (bubblewrap) only: serve refuses to start where user namespaces are refused',
    landlock: 'landlock (Landlock + seccomp + no_new_privs, no namespaces)',
  }[setting];
  return { ...sandbox, tier: { setting, takes: here } };
}

/**
 * The profile an allowed command would run under (the protected paths
 * `serve` adds are the policy file, the installation and the audit trail;
 * the trail's path is not known here). `null` when the sandbox is off or the
 * line is refused (an `ask` shows the profile an approval would run it under).
 */
function sandboxOf(
  policy: LoadedPolicy,
  decision: PolicyDecision,
  managed: LoadedPolicy | null,
): ExplainedSandbox | null {
  if (policy.sandbox.mode !== 'required' || decision.decision === 'deny') return null;
  const profiler = new SandboxProfiler(policy.sandbox, {
    privateTmp: '(a private directory created at start)',
    protect: {
      readOnly: [policy.path, ...(managed === null ? [] : [managed.path]), INSTALL_ROOT],
      hidden: [],
    },
  });
  const profile = profiler.profile(decision.resolvedCwd ?? process.cwd());
  return { sha256: sandboxProfileSha256(profile), profile };
}

function sandboxText(sandbox: ExplainedSandbox | null, policy: LoadedPolicy): string {
  if (sandbox === null) return '';
  const fs = sandbox.profile.filesystem;
  const list = (paths: readonly string[]): string => (paths.length ? paths.join(', ') : '(none)');
  return `${[
    `sandbox:  required (profile sha256 ${sandbox.sha256})`,
    ...(sandbox.tier === undefined ? [] : [`  tier:      ${sandbox.tier.setting}: ${sandbox.tier.takes}`]),
    `  emptied:   ${list(fs.emptied ?? [])} (shown empty but for the readable, socket and writable paths inside)`,
    `  readable:  ${list(fs.readable ?? [])}`,
    `  sockets:   ${list(fs.sockets ?? [])} (every other host socket in view is covered)`,
    `  writable:  ${list(fs.writable)}${fs.tmp === null ? '' : '; /tmp is private'}`,
    `  read-only: ${list(fs.readOnly)} (and the audit trail hidden, at serve time)`,
    `  placeholders (read-only, not there yet): ${list([...(fs.placeholderDirectories ?? []).map((d) => `${d}/`), ...(fs.placeholderFiles ?? [])])}`,
    `  hidden:    ${list([...fs.hiddenDirectories, ...fs.hiddenFiles])}`,
    `  network:   ${sandbox.profile.network === 'proxy' ? networkText(policy.sandbox.network) : sandbox.profile.network}`,
  ].join('\n')}\n`;
}
