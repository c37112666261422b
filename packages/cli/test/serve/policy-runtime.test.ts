import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { auditField, readAuditRecords, verifyAuditFile } from '@termgate/audit';
import type { GateRequest } from '@termgate/termhost';
import { pino } from 'pino';
import { buildContainer } from '../../src/composition/composition-root.js';
import type { PolicyRuntime } from '../../src/composition/policy-runtime.js';
import { POLICY_RUNTIME } from '../../src/composition/tokens.js';
import type { ServeConfig } from '../../src/serve/serve-config.js';

/** The policy judge runs in a worker thread; jest runs the sources, so it points the runtime at the built worker. */
const JUDGE_WORKER = resolve(
  import.meta.dirname,
  '..',
  '..',
  '..',
  'policy',
  'dist',
  'adapters',
  'judge-worker.js',
);

/** Starts the policy side as serve and acp-proxy do: through the composition root's POLICY_RUNTIME. */
async function startPolicyRuntime(
  config: ServeConfig,
  notice: (line: string) => void,
  options: { judgeWorkerPath: string },
): Promise<PolicyRuntime> {
  const notices = { notice, warning: notice, anchor: notice, problem: notice };
  return buildContainer(config, pino({ level: 'silent' }), notices, {
    reclaimExited: true,
    ...options,
  }).getAsync<PolicyRuntime>(POLICY_RUNTIME);
}

const create = (command: string, cwd: string): GateRequest => ({
  verb: 'create',
  terminalId: 'term-0123456789abcdef',
  spec: {
    command,
    args: null,
    cwd,
    env: {},
    outputByteLimit: 1024,
    argv: ['bash', '--noprofile', '--norc', '-c', command],
  },
  caller: {},
});

describe('startPolicyRuntime with the judge in a worker thread', () => {
  let dir: string;
  let policyPath: string;
  let auditPath: string;
  let config: ServeConfig;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'termgate-runtime-'));
    policyPath = join(dir, 'policy.yaml');
    auditPath = join(dir, 'audit.jsonl');
    config = {
      policyPath,
      auditPath,
      auditFsync: false,
      shell: null,
      logLevel: 'silent',
      logFormat: null,
      cwd: dir,
    };
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  test('judges with the policy it loaded and hashed, even after the file changed on disk', async () => {
    const original = [
      'default: deny',
      'rules:',
      '  - { id: ls, decision: allow, program: ls }',
      'tests:',
      "  - { command: 'ls', expect: allow }",
      '',
    ].join('\n');
    writeFileSync(policyPath, original);
    const runtime = await startPolicyRuntime(config, () => {}, { judgeWorkerPath: JUDGE_WORKER });
    try {
      writeFileSync(policyPath, 'default: allow\nrules:\n  - { id: ls, decision: deny, program: ls }\n');
      await expect(runtime.gate.decide(create('ls -la', dir))).resolves.toMatchObject({ allow: true });
      await expect(runtime.gate.decide(create('cat x', dir))).resolves.toMatchObject({ allow: false });
    } finally {
      runtime.stop('test over');
    }
    const sha256 = createHash('sha256').update(original).digest('hex');
    expect(runtime.policy.sha256).toBe(sha256);
    const records = [...readAuditRecords(auditPath)].flatMap((entry) =>
      'record' in entry ? [entry.record] : [],
    );
    const start = records.find((r) => auditField(r, 'event.action') === 'server-start');
    expect(start && auditField(start, 'termgate.policy.sha256')).toBe(sha256);
    const decisions = records.filter((r) => auditField(r, 'event.action') === 'terminal-create');
    expect(decisions.map((r) => auditField(r, 'termgate.decision'))).toEqual(['allow', 'deny']);
    expect(decisions.map((r) => auditField(r, 'termgate.policy.sha256'))).toEqual([sha256, sha256]);
  });

  test('announces the head at start and returns the final head at stop, as verify --anchor takes them', async () => {
    writeFileSync(policyPath, 'default: allow\n');
    const notices: string[] = [];
    const runtime = await startPolicyRuntime(config, (line) => notices.push(line), {
      judgeWorkerPath: JUDGE_WORKER,
    });
    const head = runtime.stop('test over');
    expect(runtime.stop('again')).toEqual(head);
    const verified = verifyAuditFile(auditPath);
    expect(verified).toMatchObject({ ok: true, head });
    expect(head?.seq).toBe(2);
    expect(notices.join('\n')).toMatch(/audit head at start: 1:[0-9a-f]{64}/);
  });

  test('fails closed when the policy tests fail in the worker: throws, and records nothing', async () => {
    writeFileSync(
      policyPath,
      "default: deny\nrules:\n  - { id: ls, decision: allow, program: ls }\ntests:\n  - { command: 'rm x', expect: allow }\n",
    );
    await expect(
      startPolicyRuntime(config, () => {}, { judgeWorkerPath: JUDGE_WORKER }),
    ).rejects.toMatchObject({
      code: 'POLICY_TESTS_FAILED',
    });
    // The trail opens while the judge starts: the file may exist, but holds no record.
    expect(existsSync(auditPath) ? readFileSync(auditPath, 'utf8') : '').toBe('');
  });

  test('fails closed when the judge worker cannot start', async () => {
    writeFileSync(policyPath, 'default: deny\nrules:\n  - { id: ls, decision: allow, program: ls }\n');
    await expect(
      startPolicyRuntime(config, () => {}, { judgeWorkerPath: join(dir, 'no-such-worker.js') }),
    ).rejects.toThrow(/does not exist/);
  });
});
