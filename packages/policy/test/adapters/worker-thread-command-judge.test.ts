import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type CommandRequest,
  createPolicyEngine,
  type LoadedPolicy,
  loadPolicyFile,
  PolicyError,
} from '@termgate/policy';
import { WorkerThreadCommandJudge } from '@termgate/policy/adapters';
import { DEFAULT_POLICY, readCorpus, STRICT_POLICY } from '../support/corpus.js';
import {
  builtJudgeWorker,
  CRASH_COMMAND as CRASH,
  HANG_COMMAND as HANG,
  hangingJudgeWorker,
  stallCommand,
  waitUntil,
} from '../support/judge-worker.js';
import { tempDir } from '../support/temp-dir.js';

// The worker-thread judge keeps the contract of the process judge
// (child-process-command-judge.test.ts): these pin what differs in how a
// worker is started and ended, and that a failure in the thread is a deny.

const line = (command: string): CommandRequest => ({ command, args: null, cwd: process.cwd(), env: {} });

const workerPath = builtJudgeWorker();
const hanging = hangingJudgeWorker();
const started: WorkerThreadCommandJudge[] = [];

async function startJudge(
  policy: LoadedPolicy,
  options: { timeoutMs?: number; maxWaitMs?: number; workerPath?: string; checkExamples?: boolean } = {},
): Promise<WorkerThreadCommandJudge> {
  const judge = await WorkerThreadCommandJudge.start({
    policyPath: policy.path,
    policyText: policy.text,
    requirePassingTests: true,
    workerPath,
    ...options,
  });
  started.push(judge);
  return judge;
}

afterEach(async () => {
  await Promise.all(started.splice(0).map((judge) => judge.close()));
});

function writePolicy(dir: string, lines: string[]): string {
  const path = join(dir, 'policy.yaml');
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

describe('WorkerThreadCommandJudge: judges like the in-process engine, in a thread', () => {
  test.each([
    ['examples/strict-enterprise.yaml', STRICT_POLICY],
    ['policies/default.yaml', DEFAULT_POLICY],
  ])('%s: a sample of the corpus and the embedded tests', async (_name, path) => {
    const policy = await loadPolicyFile(path);
    const engine = await createPolicyEngine(policy);
    const judge = await startJudge(policy);
    expect(judge.sha256).toBe(policy.sha256);
    expect(judge.threadId).toEqual(expect.any(Number));
    const requests: CommandRequest[] = [
      ...readCorpus()
        .filter((_entry, i) => i % 8 === 0)
        .map((entry) => line(entry.line)),
      ...policy.tests.map((t) => ({ command: t.command, args: t.args, cwd: t.cwd, env: t.env })),
      { command: 'npm test', args: null, cwd: process.cwd(), env: { LD_PRELOAD: '/x.so' } },
    ];
    const remote = await Promise.all(requests.map((request) => judge.judge(request)));
    const local = requests.map((request) => JSON.parse(JSON.stringify(engine.judge(request))));
    expect(remote).toEqual(local);
    expect(remote.some((d) => d.decision === 'allow')).toBe(true);
    expect(remote.some((d) => d.decision === 'deny')).toBe(true);
  });
});

describe('WorkerThreadCommandJudge: a failure in the thread denies, and the thread is replaced', () => {
  let policy: LoadedPolicy;

  beforeAll(async () => {
    policy = await loadPolicyFile(DEFAULT_POLICY);
  });

  test('a thread whose heap runs away mid-judgement ends at its limit (not the server): its requests are denied, the next gets a new thread', async () => {
    const judge = await startJudge(policy, { timeoutMs: 20_000, workerPath: hanging });
    const first = judge.threadId!;
    const [crashed, behind] = await Promise.all([judge.judge(line(CRASH)), judge.judge(line('git status'))]);
    for (const decision of [crashed, behind]) {
      expect(decision).toMatchObject({
        decision: 'deny',
        ruleIds: [],
        reason: expect.stringMatching(/worker stopped \(.*memory limit/),
      });
      expect(decision.reason).toMatch(/nothing was run$/);
    }
    await expect(judge.judge(line('git status'))).resolves.toMatchObject({ decision: 'allow' });
    expect(judge.threadId).toEqual(expect.any(Number));
    expect(judge.threadId).not.toBe(first);
  });

  test('a judgement that hangs is denied after the timeout; the thread is terminated and replaced', async () => {
    const judge = await startJudge(policy, { timeoutMs: 400, workerPath: hanging });
    const first = judge.threadId!;
    const [hung, behind] = await Promise.all([judge.judge(line(HANG)), judge.judge(line('git status'))]);
    expect(hung).toMatchObject({
      decision: 'deny',
      reason: 'denied: the policy judge did not answer within 400 ms; it was restarted; nothing was run',
    });
    expect(behind).toMatchObject({
      decision: 'deny',
      reason: expect.stringMatching(/did not answer within 400 ms/),
    });
    await expect(judge.judge(line('git status'))).resolves.toMatchObject({ decision: 'allow' });
    expect(judge.threadId).not.toBe(first);
  });

  test('a judgement whose thread waits without using the CPU (as on a loaded machine) is not timed out: the timeout counts CPU time', async () => {
    const judge = await startJudge(policy, { timeoutMs: 300, workerPath: hanging });
    const first = judge.threadId;
    const stalled = stallCommand(1_500);
    const expected = JSON.parse(JSON.stringify((await createPolicyEngine(policy)).judge(line(stalled))));
    await expect(judge.judge(line(stalled))).resolves.toEqual(expected);
    expect(expected.reason).not.toMatch(/did not answer/);
    expect(judge.threadId).toBe(first);
  });

  test('a judgement that waits past maxWaitMs is denied even though its thread used no CPU; the thread is replaced', async () => {
    const judge = await startJudge(policy, { timeoutMs: 300, maxWaitMs: 900, workerPath: hanging });
    const first = judge.threadId;
    await expect(judge.judge(line(stallCommand(60_000)))).resolves.toMatchObject({
      decision: 'deny',
      reason:
        'denied: the policy judge did not answer within 900 ms, though it used less than 300 ms of CPU; it was restarted; nothing was run',
    });
    await expect(judge.judge(line('git status'))).resolves.toMatchObject({ decision: 'allow' });
    expect(judge.threadId).not.toBe(first);
  });

  test('close during a hung judgement denies it and ends the spinning thread', async () => {
    const judge = await startJudge(policy, { timeoutMs: 10_000, workerPath: hanging });
    const hung = judge.judge(line(HANG));
    await new Promise((resolve) => setTimeout(resolve, 50));
    await judge.close();
    await expect(hung).resolves.toMatchObject({ decision: 'deny', reason: /was closed/ });
    expect(judge.threadId).toBeUndefined();
    await expect(judge.judge(line('git status'))).resolves.toMatchObject({
      decision: 'deny',
      reason: 'denied: the policy judge is closed; nothing was run',
    });
  });
});

describe('WorkerThreadCommandJudge: start fails closed', () => {
  test('a policy whose embedded tests fail: start rejects with the failures, and no thread is left', async () => {
    const dir = tempDir('termgate-judge-');
    try {
      const path = writePolicy(dir.path, [
        'default: deny',
        'rules:',
        '  - { id: ls, decision: allow, program: ls }',
        'tests:',
        "  - { command: 'ls', expect: allow }",
        "  - { command: 'rm -rf build', expect: allow }",
      ]);
      const failure = await startJudge(await loadPolicyFile(path)).then(
        () => null,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(PolicyError);
      expect(failure).toMatchObject({
        code: 'POLICY_TESTS_FAILED',
        issues: [
          { file: path, line: 6, key: 'tests', message: expect.stringMatching(/expected allow, got deny/) },
        ],
      });
    } finally {
      dir.cleanup();
    }
  });

  test('a failing rule example refuses the start unless the caller says this text already passed (checkExamples: false)', async () => {
    const dir = tempDir('termgate-judge-');
    try {
      const path = writePolicy(dir.path, [
        'default: deny',
        'rules:',
        "  - { id: ls, decision: allow, program: ls, match: ['cat x'] }",
      ]);
      const policy = await loadPolicyFile(path);
      await expect(startJudge(policy)).rejects.toMatchObject({ code: 'POLICY_INVALID' });
      const judge = await startJudge(policy, { checkExamples: false });
      await expect(judge.judge(line('ls'))).resolves.toMatchObject({ decision: 'allow' });
    } finally {
      dir.cleanup();
    }
  });

  test('a worker script that is missing, or ends before it is ready: start rejects', async () => {
    const policy = await loadPolicyFile(DEFAULT_POLICY);
    await expect(startJudge(policy, { workerPath: '/nowhere/judge-worker.js' })).rejects.toThrow(
      /does not exist/,
    );
    const dir = tempDir('termgate-judge-');
    try {
      const broken = join(dir.path, 'worker.mjs');
      writeFileSync(broken, 'process.exit(3);\n');
      await expect(startJudge(policy, { workerPath: broken })).rejects.toThrow(
        /the policy judge worker exited with code 3 before it was ready/,
      );
    } finally {
      dir.cleanup();
    }
  });
});

test('a closed judge leaves nothing that keeps the process alive (waitUntil would hang otherwise)', async () => {
  const judge = await startJudge(await loadPolicyFile(DEFAULT_POLICY));
  await judge.close();
  await waitUntil(() => judge.threadId === undefined, 'the judge forgot its thread');
});
