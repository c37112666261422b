import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { WorkerThreadSandboxProfiler } from '@termgate/policy/adapters';
import { parsePolicyText } from '../../src/policy-file/load-policy.js';
import type { SandboxPolicy } from '../../src/policy-file/policy-types.js';
import { SandboxProfiler } from '../../src/sandbox/sandbox-profiler.js';
import { builtJudgeWorker } from '../support/judge-worker.js';

// The built thread script (jest runs sources, which a worker thread cannot load).
const workerPath = join(builtJudgeWorker(), '..', 'profiler-worker.js');

let root: string;
let ws: string;
let section: SandboxPolicy;
const started: WorkerThreadSandboxProfiler[] = [];

beforeEach(() => {
  // Outside /tmp, as the suite's other sandbox scratch.
  root = realpathSync(mkdtempSync('/var/tmp/termgate-profiler-thread-'));
  ws = join(root, 'ws');
  mkdirSync(ws);
  section = parsePolicyText(
    `default: allow\nsandbox:\n  mode: required\n  filesystem: { writable: ['${ws}'] }\n`,
    join(root, 'p.yaml'),
  ).sandbox;
});
afterEach(async () => {
  await Promise.all(started.splice(0).map((p) => p.close()));
  rmSync(root, { recursive: true, force: true });
});

function threaded(
  protect = { readOnly: [] as string[], hidden: [] as string[] },
): WorkerThreadSandboxProfiler {
  const profiler = new WorkerThreadSandboxProfiler(section, { privateTmp: null, protect, workerPath });
  started.push(profiler);
  return profiler;
}

describe('WorkerThreadSandboxProfiler', () => {
  test('computes what SandboxProfiler computes, fresh at every call (a repository made between two calls is protected)', async () => {
    const protect = { readOnly: [] as string[], hidden: [join(root, 'state')] };
    mkdirSync(join(root, 'state'));
    const profiler = threaded(protect);
    const inline = new SandboxProfiler(section, { privateTmp: null, protect });
    expect(profiler.enabled).toBe(true);
    const before = await profiler.profile(ws);
    expect(before).toEqual(JSON.parse(JSON.stringify(inline.profile(ws))));
    expect(before.filesystem.readOnly).not.toContain(join(ws, 'lib', '.git'));
    execFileSync('git', ['init', '-q', join(ws, 'lib')]);
    const after = await profiler.profile(ws);
    expect(after.filesystem.readOnly).toContain(join(ws, 'lib', '.git'));
    expect(after).toEqual(JSON.parse(JSON.stringify(inline.profile(ws))));
  });

  test('a profile that cannot be computed rejects with the reason (the gate then refuses the create)', async () => {
    execFileSync('git', ['init', '-q', ws]);
    symlinkSync(join(root, 'nowhere'), join(ws, '.husky'));
    await expect(threaded().profile(ws)).rejects.toThrow(/\.husky is a symlink/);
  });

  test('close rejects later calls; a missing thread script refuses to construct', async () => {
    const profiler = threaded();
    await profiler.profile(ws);
    await profiler.close();
    await expect(profiler.profile(ws)).rejects.toThrow(/closed/);
    expect(
      () =>
        new WorkerThreadSandboxProfiler(section, {
          privateTmp: null,
          protect: { readOnly: [], hidden: [] },
          workerPath: '/nowhere/profiler-worker.js',
        }),
    ).toThrow(/does not exist/);
  });
});
