/**
 * Processes that leave their session are gone when their terminal ends,
 * through `acp-proxy`: after the agent's kill and release, SIGTERM, SIGINT
 * and the editor's EOF. Drives harness/pipe_attack.py (support/pipe-harness.ts).
 */
import { pipeHarness, RAW_AGENT, root } from './support/pipe-harness.js';

const harness = pipeHarness();

describe('processes that leave their session do not outlive their terminal (acp-proxy)', () => {
  const forms = ['setsid', 'setsid-f', 'node-detached', 'python-setsid'];
  const endings = ['kill', 'release', 'sigterm', 'sigint', 'eof'];
  const withCgroups = root || process.env.CI ? test : test.skip;
  for (const form of forms) {
    withCgroups(
      `acp-proxy, ${form}: gone after the agent's kill and release, SIGTERM, SIGINT and the editor's EOF`,
      () => {
        for (const ending of endings) {
          const result = harness(['--mode', 'acp-proxy', '--agent', RAW_AGENT, 'escape', form, ending]);
          // `error` (and the proxy's last stderr lines) shows in the diff when the escape never started.
          expect({ form, ending, error: undefined, ...result }).toMatchObject({
            form,
            ending,
            error: undefined,
            started: 1,
            survivors: 0,
          });
        }
      },
      180_000,
    );
  }
});
