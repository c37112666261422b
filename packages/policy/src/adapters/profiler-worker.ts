/**
 * The thread `WorkerThreadSandboxProfiler` starts: it runs `SandboxProfiler`
 * (its `lstat`s, directory reads and `git config` runs) for each request
 * posted on `parentPort`, off the server's event loop, and answers with the
 * profile or the error's message. Never writes to stdout.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { SandboxPolicy } from '../policy-file/policy-types.js';
import { type ProtectedPaths, SandboxProfiler } from '../sandbox/sandbox-profiler.js';
import type { FromProfiler, ToProfiler } from './profiler-worker-protocol.js';

const { policy, privateTmp } = workerData as { policy: SandboxPolicy; privateTmp: string | null };
let protect: ProtectedPaths = { readOnly: [], hidden: [] };
const profiler = new SandboxProfiler(policy, {
  privateTmp,
  get protect() {
    return protect;
  },
});

parentPort?.on('message', (message: ToProfiler) => {
  let answer: FromProfiler;
  try {
    protect = message.protect;
    answer = { id: message.id, profile: profiler.profile(message.cwd) };
  } catch (error) {
    answer = { id: message.id, error: error instanceof Error ? error.message : String(error) };
  }
  parentPort?.postMessage(answer);
});
