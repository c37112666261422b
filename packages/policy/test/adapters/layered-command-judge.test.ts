import { join } from 'node:path';
import { type CommandRequest, parsePolicyText } from '@termgate/policy';
import { ChildProcessCommandJudge, WorkerThreadCommandJudge } from '@termgate/policy/adapters';
import { builtJudgeWorker } from '../support/judge-worker.js';

// The judge in a worker, sent a managed layer's text with the workspace's:
// it judges with both (the stricter decision wins), confirms both sha256s,
// reports the workspace's loosening attempts, and refuses to start when the
// managed tests fail on the layered result.

const line = (command: string): CommandRequest => ({ command, args: null, cwd: process.cwd(), env: {} });

const MANAGED = `default: allow
rules:
  - { id: no-push, decision: deny, program: git, argvPrefix: [[push]] }
tests:
  - { command: git push, expect: deny, rule: no-push }
`;
const WORKSPACE = `default: deny
rules:
  - { id: git, decision: allow, program: git, match: ['git push origin'] }
`;

const workerPath = builtJudgeWorker();
const managedPath = join(process.cwd(), 'managed.yaml');
const workspacePath = join(process.cwd(), 'workspace.yaml');

describe.each([
  ['a worker thread', WorkerThreadCommandJudge],
  ['a forked process', ChildProcessCommandJudge],
] as const)('a layered judge in %s', (_how, Judge) => {
  test('judges with both layers and confirms both texts', async () => {
    const judge = await Judge.start({
      policyPath: workspacePath,
      policyText: WORKSPACE,
      managed: { path: managedPath, text: MANAGED },
      requirePassingTests: true,
      workerPath,
    });
    try {
      expect(judge.sha256).toBe(parsePolicyText(WORKSPACE, workspacePath).sha256);
      expect(judge.managedSha256).toBe(parsePolicyText(MANAGED, managedPath).sha256);
      await expect(judge.judge(line('git push origin'))).resolves.toMatchObject({
        decision: 'deny',
        layer: 'managed',
        ruleIds: ['managed:no-push'],
      });
      await expect(judge.judge(line('git status'))).resolves.toMatchObject({
        decision: 'allow',
        layer: 'workspace',
        ruleIds: ['git'],
      });
      expect(judge.loosenings.map((l) => l.key)).toEqual(['rules[0] (git)']);
    } finally {
      await judge.close();
    }
  });

  test('refuses to start when a managed test fails on the layered result', async () => {
    const start = Judge.start({
      policyPath: workspacePath,
      policyText: WORKSPACE,
      managed: { path: managedPath, text: `${MANAGED}  - { command: make, expect: allow }\n` },
      requirePassingTests: true,
      workerPath,
    });
    await expect(start).rejects.toMatchObject({ code: 'POLICY_TESTS_FAILED' });
  });

  test('refuses to start on an invalid managed text', async () => {
    const start = Judge.start({
      policyPath: workspacePath,
      policyText: WORKSPACE,
      managed: { path: managedPath, text: 'default: maybe\n' },
      requirePassingTests: true,
      workerPath,
    });
    await expect(start).rejects.toMatchObject({ code: 'POLICY_INVALID' });
  });

  test('without a managed layer, no layer is named and no managed sha256 claimed', async () => {
    const judge = await Judge.start({
      policyPath: workspacePath,
      policyText: WORKSPACE,
      requirePassingTests: true,
      workerPath,
    });
    try {
      expect(judge.managedSha256).toBeNull();
      const decision = await judge.judge(line('git push'));
      expect(decision.decision).toBe('allow');
      expect(decision).not.toHaveProperty('layer');
    } finally {
      await judge.close();
    }
  });
});
