import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type CommandRequest,
  createPolicyEngine,
  type LoadedPolicy,
  loadPolicyFile,
  PolicyError,
} from '@termgate/policy';
import { ChildProcessCommandJudge } from '@termgate/policy/adapters';
import { isAlive } from '../../../../test-support/processes.js';
import { DEFAULT_POLICY, readCorpus, STRICT_POLICY } from '../support/corpus.js';
import {
  builtJudgeWorker,
  HANG_COMMAND as HANG,
  hangingJudgeWorker,
  stallCommand,
  waitUntil,
} from '../support/judge-worker.js';
import { tempDir } from '../support/temp-dir.js';

const line = (command: string): CommandRequest => ({ command, args: null, cwd: process.cwd(), env: {} });

const workerPath = builtJudgeWorker();
/** Spins on `HANG`, else the shipped worker. */
const hanging = hangingJudgeWorker();
const started: ChildProcessCommandJudge[] = [];

async function startJudge(
  policy: LoadedPolicy,
  options: { timeoutMs?: number; maxWaitMs?: number; workerPath?: string } = {},
): Promise<ChildProcessCommandJudge> {
  const judge = await ChildProcessCommandJudge.start({
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

describe('ChildProcessCommandJudge: judges like the in-process engine', () => {
  const corpus = readCorpus();

  test.each([
    ['examples/strict-enterprise.yaml', STRICT_POLICY],
    ['policies/default.yaml', DEFAULT_POLICY],
  ])('%s: a sample of the corpus, argv requests and env requests', async (_name, path) => {
    const policy = await loadPolicyFile(path);
    const engine = await createPolicyEngine(policy);
    const judge = await startJudge(policy);
    expect(judge.sha256).toBe(policy.sha256);
    const requests: CommandRequest[] = [
      ...corpus.filter((_entry, i) => i % 4 === 0).map((entry) => line(entry.line)),
      ...policy.tests.map((t) => ({ command: t.command, args: t.args, cwd: t.cwd, env: t.env })),
      { command: 'git', args: ['log', '--format=%H %s'], cwd: process.cwd(), env: {} },
      { command: 'rm', args: ['-rf', '/'], cwd: process.cwd(), env: {} },
      { command: 'npm test', args: null, cwd: process.cwd(), env: { LD_PRELOAD: '/x.so' } },
      { command: 'ls', args: null, cwd: '/', env: {} },
    ];
    const remote = await Promise.all(requests.map((request) => judge.judge(request)));
    // What crosses the channel is JSON: compare with the engine's decision as JSON.
    const local = requests.map((request) => JSON.parse(JSON.stringify(engine.judge(request))));
    expect(remote).toEqual(local);
    expect(remote.some((d) => d.decision === 'allow')).toBe(true);
    expect(remote.some((d) => d.decision === 'deny')).toBe(true);
  });
});

describe('ChildProcessCommandJudge: failures deny and the worker is replaced', () => {
  let policy: LoadedPolicy;

  beforeAll(async () => {
    policy = await loadPolicyFile(DEFAULT_POLICY);
  });

  test('a worker killed with SIGKILL mid-judgement: its requests are denied, the next request gets a new worker', async () => {
    const judge = await startJudge(policy, { timeoutMs: 10_000, workerPath: hanging });
    const first = judge.pid!;
    const hung = judge.judge(line(HANG));
    const queued = judge.judge(line('git status'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    process.kill(first, 'SIGKILL');
    for (const pending of [hung, queued]) {
      await expect(pending).resolves.toMatchObject({
        decision: 'deny',
        ruleIds: [],
        reason: expect.stringMatching(/worker stopped \(killed by SIGKILL\).*nothing was run/),
      });
    }
    await expect(judge.judge(line('git status'))).resolves.toMatchObject({ decision: 'allow' });
    expect(judge.pid).toEqual(expect.any(Number));
    expect(judge.pid).not.toBe(first);
  });

  test('a judgement that hangs is denied after the timeout, and the hung worker is killed and replaced', async () => {
    // The timeout must pass for the hang, and must not for the judgement after
    // the restart, also on a loaded machine: 2 s.
    const judge = await startJudge(policy, { timeoutMs: 2_000, workerPath: hanging });
    const first = judge.pid!;
    const [hung, behind] = await Promise.all([judge.judge(line(HANG)), judge.judge(line('git status'))]);
    expect(hung).toMatchObject({
      decision: 'deny',
      reason: 'denied: the policy judge did not answer within 2000 ms; it was restarted; nothing was run',
    });
    // The request queued behind the hang on the same worker is denied too, never allowed.
    expect(behind).toMatchObject({
      decision: 'deny',
      reason: expect.stringMatching(/did not answer within 2000 ms/),
    });
    await waitUntil(() => !isAlive(first), `the hung worker ${first} is gone`);
    await expect(judge.judge(line('git status'))).resolves.toMatchObject({ decision: 'allow' });
    expect(judge.pid).not.toBe(first);
  });

  test('the shipped worker has no hang hook: the fixture command line is judged like any other', async () => {
    const judge = await startJudge(policy, { timeoutMs: 20_000 });
    const engine = await createPolicyEngine(policy);
    await expect(judge.judge(line(HANG))).resolves.toEqual(
      JSON.parse(JSON.stringify(engine.judge(line(HANG)))),
    );
  });

  test('when restarts keep failing, every request is denied with the start error', async () => {
    const dir = tempDir('termgate-judge-');
    try {
      // A worker script that can be broken after the start: restarts then fail.
      const wrapper = join(dir.path, 'worker.mjs');
      writeFileSync(wrapper, `import ${JSON.stringify(workerPath)};\n`);
      const judge = await startJudge(policy, { workerPath: wrapper, timeoutMs: 5_000 });
      writeFileSync(wrapper, 'process.exit(1);\n');
      process.kill(judge.pid!, 'SIGKILL');
      await waitUntil(() => judge.pid === undefined, 'the judge noticed the exit');
      for (let i = 0; i < 4; i++) {
        await expect(judge.judge(line('git status'))).resolves.toMatchObject({
          decision: 'deny',
          reason: expect.stringMatching(
            /^denied: the policy judge could not start \(the policy judge worker exited with code 1 before it was ready\)/,
          ),
        });
      }
    } finally {
      dir.cleanup();
    }
  });
});

describe('ChildProcessCommandJudge: start and close', () => {
  test('a policy whose embedded tests fail: start rejects with the failures', async () => {
    const dir = tempDir('termgate-judge-');
    try {
      const path = join(dir.path, 'policy.yaml');
      writeFileSync(
        path,
        [
          'default: deny',
          'rules:',
          '  - { id: ls, decision: allow, program: ls }',
          'tests:',
          "  - { command: 'ls', expect: allow }",
          "  - { command: 'rm -rf build', expect: allow }",
          '',
        ].join('\n'),
      );
      const policy = await loadPolicyFile(path);
      const failure = await startJudge(policy).then(
        () => null,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(PolicyError);
      expect(failure).toMatchObject({
        code: 'POLICY_TESTS_FAILED',
        message: expect.stringMatching(
          /^1 embedded test\(s\) of .*policy\.yaml failed\n.*policy\.yaml:6:5: tests: /,
        ),
        issues: [
          { file: path, line: 6, key: 'tests', message: expect.stringMatching(/expected allow, got deny/) },
        ],
      });
    } finally {
      dir.cleanup();
    }
  });

  test('an invalid policy text: start rejects with the POLICY_INVALID error', async () => {
    await expect(
      ChildProcessCommandJudge.start({
        policyPath: '/nowhere/policy.yaml',
        policyText: 'default: maybe\n',
        requirePassingTests: true,
        workerPath,
      }),
    ).rejects.toMatchObject({ code: 'POLICY_INVALID', issues: [{ key: 'default' }] });
  });

  test('a missing worker script: start rejects and says so', async () => {
    const policy = await loadPolicyFile(DEFAULT_POLICY);
    await expect(startJudge(policy, { workerPath: '/nowhere/judge-worker.js' })).rejects.toThrow(
      /judge worker \/nowhere\/judge-worker\.js does not exist/,
    );
  });

  test('the text sent is what is judged, whatever the file holds later', async () => {
    const dir = tempDir('termgate-judge-');
    try {
      const path = join(dir.path, 'policy.yaml');
      writeFileSync(path, 'default: deny\nrules:\n  - { id: ls, decision: allow, program: ls }\n');
      const policy = await loadPolicyFile(path);
      const judge = await startJudge(policy);
      writeFileSync(path, 'default: allow\nrules:\n  - { id: ls, decision: deny, program: ls }\n');
      await expect(judge.judge(line('ls'))).resolves.toMatchObject({ decision: 'allow', ruleIds: ['ls'] });
      await expect(judge.judge(line('cat x'))).resolves.toMatchObject({ decision: 'deny' });
      // A restarted worker is sent the same text, not the file.
      process.kill(judge.pid!, 'SIGKILL');
      await waitUntil(() => judge.pid === undefined, 'the judge noticed the exit');
      await expect(judge.judge(line('ls'))).resolves.toMatchObject({ decision: 'allow', ruleIds: ['ls'] });
      expect(judge.sha256).toBe(policy.sha256);
    } finally {
      dir.cleanup();
    }
  });

  test('close ends the worker, denies later requests, and is idempotent', async () => {
    const judge = await startJudge(await loadPolicyFile(DEFAULT_POLICY));
    const pid = judge.pid!;
    expect(isAlive(pid)).toBe(true);
    const closing = judge.close();
    expect(judge.close()).toBe(closing);
    await closing;
    expect(isAlive(pid)).toBe(false);
    expect(judge.pid).toBeUndefined();
    await expect(judge.judge(line('git status'))).resolves.toMatchObject({
      decision: 'deny',
      reason: 'denied: the policy judge is closed; nothing was run',
    });
  });

  test('a judgement whose process waits without using the CPU (as on a loaded machine) is not timed out: the timeout counts CPU time', async () => {
    const policy = await loadPolicyFile(DEFAULT_POLICY);
    const judge = await startJudge(policy, { timeoutMs: 300, workerPath: hanging });
    const first = judge.pid;
    const stalled = stallCommand(1_500);
    const expected = JSON.parse(JSON.stringify((await createPolicyEngine(policy)).judge(line(stalled))));
    await expect(judge.judge(line(stalled))).resolves.toEqual(expected);
    expect(expected.reason).not.toMatch(/did not answer/);
    expect(judge.pid).toBe(first);
  });

  test('a judgement that waits past maxWaitMs is denied even though its process used no CPU; the process is replaced', async () => {
    const policy = await loadPolicyFile(DEFAULT_POLICY);
    const judge = await startJudge(policy, { timeoutMs: 300, maxWaitMs: 900, workerPath: hanging });
    const first = judge.pid;
    await expect(judge.judge(line(stallCommand(60_000)))).resolves.toMatchObject({
      decision: 'deny',
      reason:
        'denied: the policy judge did not answer within 900 ms, though it used less than 300 ms of CPU; it was restarted; nothing was run',
    });
    await expect(judge.judge(line('git status'))).resolves.toMatchObject({ decision: 'allow' });
    expect(judge.pid).not.toBe(first);
  });

  test('close during a hung judgement denies it and still ends the worker', async () => {
    const judge = await startJudge(await loadPolicyFile(DEFAULT_POLICY), {
      timeoutMs: 10_000,
      workerPath: hanging,
    });
    const pid = judge.pid!;
    const hung = judge.judge(line(HANG));
    await new Promise((resolve) => setTimeout(resolve, 50));
    await judge.close();
    await expect(hung).resolves.toMatchObject({ decision: 'deny', reason: /was closed/ });
    expect(isAlive(pid)).toBe(false);
  });
});
