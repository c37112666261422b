/**
 * Issue 19: a force push spelled with global options and a `+refspec`
 * (`git -p push origin +HEAD~1:main`) rewrote a remote's main with no
 * question under the shipped default. Here a real `termgate serve` with the
 * default policy (sandbox off, so that only the gate stands between the
 * line and the remote) refuses each spelling, and the remote's ref is
 * checked on the host afterwards. A control server with a policy that
 * allows everything runs the same line and does rewrite the ref, so the
 * check can fail.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import {
  defaultPolicyArgs,
  modern,
  removeAuditFiles,
  structuredResult,
  toolErrorText,
  type WireMessage,
  WireServer,
} from './support/wire-server.js';

// Outside /tmp: a sandboxed run would see its private /tmp, and the checks must not pass for that reason.
const root = realpathSync(mkdtempSync('/var/tmp/termgate-e2e-push-'));
const work = path.join(root, 'work');
const remote = path.join(root, 'remote.git');

function git(args: readonly string[], cwd = work): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: root, GIT_CONFIG_NOSYSTEM: '1' },
  }).trim();
}

let first: string;
let second: string;

beforeAll(() => {
  mkdirSync(work);
  git(['init', '-q', '--bare', '-b', 'main', remote], root);
  git(['init', '-q', '-b', 'main']);
  writeFileSync(path.join(work, 'a.txt'), '1\n');
  git(['add', 'a.txt']);
  git(['commit', '-q', '-m', 'one']);
  first = git(['rev-parse', 'HEAD']);
  writeFileSync(path.join(work, 'a.txt'), '2\n');
  git(['commit', '-q', '-am', 'two']);
  second = git(['rev-parse', 'HEAD']);
  git(['remote', 'add', 'origin', remote]);
  git(['push', '-q', 'origin', 'main']);
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  removeAuditFiles();
});

const remoteMain = (): string => git(['--git-dir', remote, 'rev-parse', 'refs/heads/main'], root);

function create(server: WireServer, command: string): Promise<WireMessage> {
  return server.request(
    'tools/call',
    modern({ name: 'terminal_create', arguments: { command, cwd: work, waitSeconds: 60 } }),
    server.id(),
    90_000,
  );
}

describe('under the default policy', () => {
  let server: WireServer;
  beforeAll(() => {
    server = WireServer.start(defaultPolicyArgs(false), { cwd: work, env: { ...process.env, HOME: root } });
  });
  afterAll(() => server.dispose());

  it.each([
    'git -p push origin +HEAD~1:main',
    'git --git-dir .git push origin +HEAD~1:main',
    'git -C . -p push --force-with-lease origin HEAD~1:main',
    'git push --force-if-includes --force-with-lease origin HEAD~1:main',
    'git push -fu origin HEAD~1:main',
    'echo origin +HEAD~1:main | xargs git -p push',
  ])(
    '%s is refused, and the remote main is unchanged',
    async (line) => {
      const answer = await create(server, line);
      expect(toolErrorText(answer)).toMatch(/polic/i);
      expect(remoteMain()).toBe(second);
    },
    120_000,
  );

  it('a plain push in another spelling asks, and a client that cannot answer gets a refusal (no ref is made)', async () => {
    const answer = await create(server, 'git -p push origin HEAD:refs/heads/asked');
    expect(toolErrorText(answer)).toMatch(/approv/i);
    expect(() =>
      git(['--git-dir', remote, 'rev-parse', '--verify', '-q', 'refs/heads/asked'], root),
    ).toThrow();
  }, 120_000);
});

describe('control: a policy that allows everything', () => {
  let server: WireServer;
  beforeAll(() => {
    const policy = path.join(root, 'allow-all.yaml');
    writeFileSync(policy, 'default: allow\n');
    server = WireServer.start(['--policy', policy], { cwd: work, env: { ...process.env, HOME: root } });
  });
  afterAll(() => server.dispose());

  it('runs the same line, which rewrites the remote main (so the checks above can fail)', async () => {
    const answer = await create(server, 'git -p push origin +HEAD~1:main');
    expect(structuredResult(answer)).toMatchObject({ exitCode: 0 });
    expect(remoteMain()).toBe(first);
  }, 120_000);
});
