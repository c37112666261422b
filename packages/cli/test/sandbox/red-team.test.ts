/**
 * Escapes a red-team review found in the first version of the sandbox, each
 * replayed against the built server under a sandboxed policy. Every one of
 * them worked before its fix; the checks are on the host, not on the
 * command's word.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { WireServer } from '../e2e/support/wire-server.js';
import { makeWorld, readText, run, type SandboxWorld, serveIn } from './support/sandbox-fixture.js';

const section = (extra: string[] = []): string =>
  [
    '  mode: required',
    '  filesystem:',
    "    hidden: ['~/.ssh', '~/.kube']",
    ...extra,
    '  network: none',
  ].join('\n');

/** Runs git on the host, as the person would after the agent's session, in `cwd`; returns whether a marker appeared. */
function hostGitRuns(cwd: string, marker: string): boolean {
  try {
    execFileSync('git', ['status'], {
      cwd,
      stdio: 'ignore',
      env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null' },
    });
  } catch {
    // A broken repository is not a planted one.
  }
  return existsSync(marker);
}

describe('git stays the person’s: the git dir is read-only as a whole', () => {
  let w: SandboxWorld;
  let server: WireServer;

  beforeEach(() => {
    w = makeWorld({ sandbox: section() });
    server = serveIn(w);
  });
  afterEach(async () => {
    await server.dispose();
    w.dispose();
  });

  test('renaming .git aside and planting a new one fails', async () => {
    const marker = path.join(w.root, 'PWNED_RENAME');
    const result = await run(
      server,
      `mv .git .gitold && mkdir -p .git/hooks && cp -r .gitold/objects .gitold/refs .gitold/HEAD .git/ && printf '[core]\\n\\tfsmonitor = "touch ${marker}"\\n' > .git/config; echo "rc=$?"`,
    );
    expect(result.output).toMatch(/Device or resource busy|Read-only file system/);
    expect(existsSync(path.join(w.workspace, '.gitold'))).toBe(false);
    expect(hostGitRuns(w.workspace, marker)).toBe(false);
  });

  test('writing .git/commondir to point at a planted config fails', async () => {
    const marker = path.join(w.root, 'PWNED_COMMONDIR');
    await run(
      server,
      `mkdir -p evil && printf '[core]\\n\\tfsmonitor = "touch ${marker}"\\n' > evil/config && echo ../evil > .git/commondir`,
    );
    expect(existsSync(path.join(w.workspace, '.git/commondir'))).toBe(false);
    expect(hostGitRuns(w.workspace, marker)).toBe(false);
  });

  test('rewriting a worktree’s .git file to a planted git dir fails', async () => {
    // A linked worktree made on the host, inside the workspace.
    execFileSync(
      'git',
      ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'x'],
      {
        cwd: w.workspace,
      },
    );
    execFileSync('git', ['worktree', 'add', '-q', path.join(w.workspace, 'wt')], { cwd: w.workspace });
    const marker = path.join(w.root, 'PWNED_WORKTREE');
    await run(
      server,
      `git init -q evil2 && printf '[core]\\n\\tfsmonitor = "touch ${marker}"\\n' >> evil2/.git/config; echo 'gitdir: ../evil2/.git' > wt/.git`,
    );
    expect(readText(path.join(w.workspace, 'wt/.git'))).toMatch(/^gitdir: .*\.git\/worktrees\/wt/);
    expect(hostGitRuns(path.join(w.workspace, 'wt'), marker)).toBe(false);
  });

  test('git commit inside the sandbox fails; reading history works', async () => {
    const result = await run(
      server,
      'git log --oneline | wc -l; git -c user.name=t -c user.email=t@t commit -q --allow-empty -m y; echo "rc=$?"',
    );
    expect(result.output).toMatch(/rc=128/);
  });
});

describe('protected paths deeper than one level cannot be swapped by renaming a parent', () => {
  let w: SandboxWorld;
  let server: WireServer;

  beforeAll(() => {
    w = makeWorld({ sandbox: section(["    readOnly: ['${SERVER_CWD}/.vscode/tasks.json']"]) });
    mkdirSync(path.join(w.workspace, '.vscode'));
    writeFileSync(path.join(w.workspace, '.vscode/tasks.json'), '{"original": true}\n');
    server = serveIn(w);
  });
  afterAll(async () => {
    await server.dispose();
    w.dispose();
  });

  test('a read-only file: moving its directory aside fails, so it cannot be replaced', async () => {
    const result = await run(
      server,
      `mv .vscode .vscode2; mkdir -p .vscode; echo '{"runOn":"folderOpen"}' > .vscode/tasks.json; echo done`,
    );
    expect(result.output).toMatch(/Device or resource busy/);
    expect(readText(path.join(w.workspace, '.vscode/tasks.json'))).toBe('{"original": true}\n');
  });
});

describe('what a command plants cannot steer the sandbox or the gate', () => {
  let w: SandboxWorld;
  let server: WireServer;
  let kubeSecret: string;

  beforeEach(() => {
    w = makeWorld({ sandbox: section() });
    kubeSecret = `kube-secret-${Date.now()}`;
    mkdirSync(path.join(w.home, '.kube'));
    writeFileSync(path.join(w.home, '.kube/config'), `${kubeSecret}\n`);
    server = serveIn(w);
  });
  afterEach(async () => {
    await server.dispose();
    w.dispose();
  });

  test('a symlink chain through the private /tmp does not expose a hidden directory’s config', async () => {
    writeFileSync(
      path.join(w.workspace, 'leak.sh'),
      [
        'S=${1#/}',
        `X=$(awk '$5=="/tmp"{print $4}' /proc/self/mountinfo)`,
        'up() { local p=$1 r=""; while [ "$p" != "/" ] && [ -n "$p" ]; do r="../$r"; p=$(dirname "$p"); done; echo "$r"; }',
        'ln -sfn "$(up "$X")$S" /tmp/L',
        'mkdir -p "/tmp${X#/tmp}" /tmp/vis && ln -sfn "$(up "$X")tmp/vis" "/tmp${X#/tmp}/L"',
        'rm -rf leaksub; mkdir leaksub && ln -s "$(up "$PWD/leaksub")${X#/}/L" leaksub/.git',
        'echo armed',
      ].join('\n'),
    );
    await run(server, `bash leak.sh ${path.join(w.home, '.kube')}`);
    const read = await run(server, 'cat /tmp/vis/config 2>&1; cat ~/.kube/config 2>&1; echo end');
    expect(read.output).not.toContain(kubeSecret);
    expect(existsSync(path.join(w.home, '.kube/hooks'))).toBe(false);
  });

  test('a .git/modules symlink makes termgate create nothing outside the writable directories', async () => {
    const target = path.join(w.outside, 'target');
    mkdirSync(path.join(target, 'a'), { recursive: true });
    await run(server, `ln -s ${target} .git/modules 2>&1; mkdir -p sub3 && ln -s ${target} sub3/.git`);
    await run(server, 'true');
    expect(readdirSync(target)).toEqual(['a']);
    expect(readdirSync(path.join(target, 'a'))).toEqual([]);
  });

  test('a FIFO named .git does not stall the gate, and a dangling .git symlink breaks nothing', async () => {
    await run(server, 'mkdir -p fifo dangling && mkfifo fifo/.git && ln -s /tmp/nowhere/x dangling/.git');
    const next = await run(server, 'echo still-served');
    expect(next.output).toBe('still-served\n');
    expect(next.exitCode).toBe(0);
  });
});

describe('with privateTmp off, another server’s runtime directory stays hidden', () => {
  let a: SandboxWorld;
  let b: SandboxWorld;
  let serverA: WireServer;
  let serverB: WireServer;

  beforeAll(() => {
    a = makeWorld({ sandbox: section(['    privateTmp: false']) });
    b = makeWorld({
      sandbox: [
        '  mode: required',
        '  filesystem:',
        '    privateTmp: true',
        "  network: { allow: ['127.0.0.2'] }",
      ].join('\n'),
    });
    serverA = serveIn(a);
    serverB = serveIn(b);
  });
  afterAll(async () => {
    await Promise.all([serverA.dispose(), serverB.dispose()]);
    a.dispose();
    b.dispose();
  });

  test('B’s private /tmp and proxy socket are invisible to A', async () => {
    await run(serverB, 'echo secret-in-B-tmp > /tmp/b-secret');
    const probe = await run(
      serverA,
      'ls -d /tmp/termgate-sandbox-*/* 2>&1; cat /tmp/termgate-sandbox-*/*/tmp/b-secret 2>&1; echo end',
    );
    expect(probe.output).not.toContain('secret-in-B-tmp');
    expect(probe.output).not.toMatch(/run-/);
  });
});
