/**
 * Drives harness/pipe_attack.py: a client on real OS pipes (not Node's
 * socketpairs) attacks the protocol stream through /proc/$PPID/fd, and
 * processes leave their session before the terminal ends.
 *
 * Reusable with the sandbox: TERMGATE_ATTACK_SERVER_ARGS (a JSON array)
 * is passed to `serve`/`acp-proxy` (e.g. ["--policy", "sandboxed.yaml"]),
 * and TERMGATE_ATTACK_EXPECT=blocked makes the unprivileged case expect the
 * attacks to fail too (without the sandbox they succeed there: README).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import {
  DEFAULT_POLICY,
  REPO_ROOT,
  SERVER_BIN,
  unsandboxedDefaultPolicy,
} from '../e2e/support/wire-server.js';

const HARNESS = path.join(__dirname, 'harness', 'pipe_attack.py');
const RAW_AGENT = path.join(REPO_ROOT, 'packages/cli/test/acp-proxy/fixtures/raw-agent.mjs');
// The no-sandbox measures are what these suites are about: the shipped default with its sandbox off,
// unless TERMGATE_ATTACK_SERVER_ARGS names another policy. The sandboxed runs are at the end.
const EXTRA: string[] = JSON.parse(process.env.TERMGATE_ATTACK_SERVER_ARGS ?? 'null') ?? [
  '--policy',
  unsandboxedDefaultPolicy(),
];
const EXPECT_UNPRIVILEGED = process.env.TERMGATE_ATTACK_EXPECT ?? 'open';
const root = process.getuid?.() === 0;

const scratch = mkdtempSync(path.join(tmpdir(), 'termgate-attack-'));
chmodSync(scratch, 0o777);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let runs = 0;
// biome-ignore lint/suspicious/noExplicitAny: JSON printed by the harness; the assertions check its shape.
function harness(
  args: string[],
  { unprivileged = false, serverArgs: extra = EXTRA }: { unprivileged?: boolean; serverArgs?: string[] } = {},
): Record<string, any> {
  runs += 1;
  // Each trail in a directory of its own: a sandbox hides the trail's whole directory.
  const trail = path.join(scratch, `trail-${runs}`);
  mkdirSync(trail, { mode: 0o777 });
  chmodSync(trail, 0o777);
  const serverArgs = ['--audit', path.join(trail, 'audit.jsonl'), ...extra].flatMap((a) => [
    `--server-arg=${a}`,
  ]);
  const argv = [HARNESS, '--bin', SERVER_BIN, '--cwd', REPO_ROOT, ...serverArgs, ...args];
  // As root, the unprivileged case runs the client (so its pipes) and the server as nobody.
  const command =
    unprivileged && root
      ? [
          'setpriv',
          '--reuid=65534',
          '--regid=65534',
          '--clear-groups',
          'env',
          `HOME=${scratch}`,
          'python3',
          ...argv,
        ]
      : ['python3', ...argv];
  const stdout = execFileSync(command[0]!, command.slice(1), { encoding: 'utf8', timeout: 180_000 });
  return JSON.parse(stdout.trim().split('\n').pop()!);
}

const modes = [
  ['serve', []],
  ['acp-proxy', ['--mode', 'acp-proxy', '--agent', RAW_AGENT]],
] as const;

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
