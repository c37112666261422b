/**
 * Drives harness/pipe_attack.py (support/pipe-harness.ts): a client on real
 * OS pipes (not Node's socketpairs) attacks the protocol stream through
 * /proc/$PPID/fd, without and with the sandbox. The processes that leave
 * their session are in session-escape-serve.test.ts and
 * session-escape-acp-proxy.test.ts (split so that jest's workers share them).
 */
import { execFileSync } from 'node:child_process';
import { DEFAULT_POLICY } from '../e2e/support/wire-server.js';
import { EXPECT_UNPRIVILEGED, modes, pipeHarness, root } from './support/pipe-harness.js';

const harness = pipeHarness();

describe('the protocol stream, attacked from a command over real OS pipes', () => {
  test('python3 is there to drive the harness (CI must have it)', () => {
    expect(() => execFileSync('python3', ['--version'])).not.toThrow();
  });

  for (const [mode, modeArgs] of modes) {
    const rootOnly = root || process.env.CI ? test : test.skip;
    rootOnly(
      `${mode} as root: printf > /proc/$PPID/fd/1 cannot inject (commands lack CAP_SYS_PTRACE)`,
      () => {
        const result = harness([...modeArgs, 'inject']);
        expect(result.output).toMatch(/denied .*Permission denied/);
        expect(result).toMatchObject({
          opened: false,
          forged_seen: false,
          garbage_lines: 0,
          client_ok: true,
        });
      },
      180_000,
    );

    rootOnly(
      `${mode} as root: reading /proc/$PPID/fd/0 cannot steal requests`,
      () => {
        const result = harness([...modeArgs, 'steal']);
        expect(result.output).toMatch(/denied .*Permission denied/);
        expect(result).toMatchObject({ opened: false, stolen_bytes: 0, client_ok: true });
      },
      180_000,
    );

    test(`${mode} as an unprivileged user, same uid as its client: ${EXPECT_UNPRIVILEGED === 'blocked' ? 'blocked' : 'reachable without the sandbox (documented)'}`, () => {
      const inject = harness([...modeArgs, 'inject'], { unprivileged: true });
      const steal = harness([...modeArgs, 'steal'], { unprivileged: true });
      if (EXPECT_UNPRIVILEGED === 'blocked') {
        expect(inject).toMatchObject({
          opened: false,
          forged_seen: false,
          garbage_lines: 0,
          client_ok: true,
        });
        expect(steal).toMatchObject({ opened: false, stolen_bytes: 0, client_ok: true });
      } else {
        // Pinned: what README's security section says holds only with the sandbox.
        // The forged answer or the broken fragment reached the client (it may even cut the create's own answer).
        expect(inject.forged_seen || inject.garbage_lines > 0).toBe(true);
        expect(steal.opened || steal.stolen_bytes > 0).toBe(true);
      }
    }, 240_000);
  }
});

describe('with the sandbox (the shipped default policy): the protocol stream is out of reach', () => {
  const sandboxed = ['--policy', DEFAULT_POLICY];
  for (const [mode, modeArgs] of modes) {
    for (const unprivileged of [false, true]) {
      const who = unprivileged ? 'an unprivileged user, same uid as its client' : 'the tests’ own user';
      test(`${mode} as ${who}: neither injection nor theft reaches the client (own pid namespace and /proc)`, () => {
        const inject = harness([...modeArgs, 'inject'], { unprivileged, serverArgs: sandboxed });
        const steal = harness([...modeArgs, 'steal'], { unprivileged, serverArgs: sandboxed });
        // $PPID inside is the sandbox's own init, whose fds are the terminal's pipes and /dev/null: the
        // command may open them, and reaches only itself.
        expect(inject).toMatchObject({ forged_seen: false, garbage_lines: 0, client_ok: true });
        expect(steal).toMatchObject({ stolen_bytes: 0, client_ok: true });
      }, 240_000);
    }
  }
});
