/**
 * Drives harness/pipe_attack.py for the hostile suites: a client on real OS
 * pipes (not Node's socketpairs) that attacks the protocol stream through
 * /proc/$PPID/fd, or starts processes that leave their session before the
 * terminal ends. Each run starts its own server with its own trail.
 *
 * Reusable with the sandbox: TERMGATE_ATTACK_SERVER_ARGS (a JSON array)
 * is passed to `serve`/`acp-proxy` (e.g. ["--policy", "sandboxed.yaml"]),
 * and TERMGATE_ATTACK_EXPECT=blocked makes the unprivileged case expect the
 * attacks to fail too (without the sandbox they succeed there: docs/PROTOCOL.md).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { REPO_ROOT, SERVER_BIN, unsandboxedDefaultPolicy } from '../../e2e/support/wire-server.js';

const HARNESS = path.join(REPO_ROOT, 'packages/cli/test/hostile/harness/pipe_attack.py');
export const RAW_AGENT = path.join(REPO_ROOT, 'packages/cli/test/acp-proxy/fixtures/raw-agent.mjs');
// The no-sandbox measures are what these suites are about: the shipped default with its sandbox off,
// unless TERMGATE_ATTACK_SERVER_ARGS names another policy.
const EXTRA: string[] = JSON.parse(process.env.TERMGATE_ATTACK_SERVER_ARGS ?? 'null') ?? [
  '--policy',
  unsandboxedDefaultPolicy(),
];
export const EXPECT_UNPRIVILEGED = process.env.TERMGATE_ATTACK_EXPECT ?? 'open';
export const root = process.getuid?.() === 0;

export const modes = [
  ['serve', []],
  ['acp-proxy', ['--mode', 'acp-proxy', '--agent', RAW_AGENT]],
] as const;

export type Harness = (
  args: string[],
  options?: { unprivileged?: boolean; serverArgs?: string[] },
  // biome-ignore lint/suspicious/noExplicitAny: JSON printed by the harness; the assertions check its shape.
) => Record<string, any>;

/** A harness runner with its own scratch directory, removed after the file's tests. */
export function pipeHarness(): Harness {
  const scratch = mkdtempSync(path.join(tmpdir(), 'termgate-attack-'));
  chmodSync(scratch, 0o777);
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  let runs = 0;
  return (args, { unprivileged = false, serverArgs: extra = EXTRA } = {}) => {
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
  };
}
