/**
 * Processes that leave their session (setsid, setsid -f, a detached node
 * child, python's os.setsid) are gone when their terminal ends, served by
 * `serve`, for every ending: kill, release, SIGTERM, SIGINT, stdin's EOF.
 * Drives harness/pipe_attack.py (support/pipe-harness.ts).
 */
import { pipeHarness, root } from './support/pipe-harness.js';

const harness = pipeHarness();

describe('processes that leave their session do not outlive their terminal', () => {
  const forms = ['setsid', 'setsid-f', 'node-detached', 'python-setsid'];
  const endings = ['kill', 'release', 'sigterm', 'sigint', 'eof'];
  const withCgroups = root || process.env.CI ? test : test.skip;
  for (const form of forms) {
    withCgroups(
      `${form}: gone after ${endings.join(', ')}`,
      () => {
        for (const ending of endings) {
          const result = harness(['escape', form, ending]);
          expect({ form, ending, ...result }).toMatchObject({ form, ending, started: 1, survivors: 0 });
          // A plain `setsid sleep` leaves at once: the terminal says something still runs.
          if (form === 'setsid')
            expect(result.exit_status).toMatchObject({ exitCode: 0, processesLeft: true });
        }
      },
      180_000,
    );
  }
});
