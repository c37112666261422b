/**
 * The run-later set (issue 19 item 1): what a command plants in the
 * workspace that the person's own tools run later, on the host, outside
 * the sandbox. Each case runs with the sandbox off (the plant works and the
 * host tool runs it: the gap) and on, and is checked on the host: the
 * person's `git commit` or `git push` is run there and the marker its hook
 * would leave is looked for; the planted file's bytes are read there.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { WireServer } from '../e2e/support/wire-server.js';
import { makeWorld, readText, run, type SandboxWorld, serveIn } from './support/sandbox-fixture.js';

const GIT_ID = ['-c', 'user.email=person@example.org', '-c', 'user.name=person'];
const HOOK = '#!/bin/sh\\ntouch "$(dirname "$0")/../../HOOK-RAN" "$PWD/HOOK-RAN"\\n';

function hostGit(cwd: string, ...args: string[]): string {
  return execFileSync('git', [...GIT_ID, ...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function section(mode: 'off' | 'required', extra: readonly string[] = []): string {
  return [
    `  mode: ${mode}`,
    '  filesystem:',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a policy placeholder, not a template
    "    readOnly: ['${SERVER_CWD}/.envrc']",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a policy placeholder, not a template
    "    hidden: ['${SERVER_CWD}/conf/secret.env']",
    ...extra,
    '  network: none',
  ].join('\n');
}

/** A workspace as a person has it: a repository whose hooks are husky's, a package, a local bare remote, a hidden file. */
function prepare(world: SandboxWorld): void {
  const ws = world.workspace;
  hostGit(ws, 'config', 'core.hooksPath', '.husky');
  writeFileSync(path.join(ws, 'package.json'), '{ "name": "w", "version": "1.0.0" }\n');
  mkdirSync(path.join(ws, 'conf'));
  writeFileSync(path.join(ws, 'conf', 'secret.env'), `${world.secret}\n`);
  hostGit(ws, 'init', '-q', '--bare', 'remote.git');
  hostGit(ws, 'commit', '-q', '--allow-empty', '-m', 'first');
}

describe.each([
  ['off', false],
  ['required', true],
] as const)('the run-later set, sandbox.mode: %s', (mode, confined) => {
  let world: SandboxWorld;
  let server: WireServer;

  beforeAll(() => {
    world = makeWorld({ sandbox: section(mode) });
    prepare(world);
    server = serveIn(world);
  }, 60_000);
  afterAll(async () => {
    await server?.dispose();
    world?.dispose();
  });

  const ran = (): boolean => existsSync(path.join(world.workspace, 'HOOK-RAN'));

  test(`a hook planted in core.hooksPath (.husky) ${confined ? 'cannot be written' : 'runs at the person’s git commit'}`, async () => {
    const result = await run(
      server,
      `mkdir -p .husky && printf '${HOOK}' > .husky/pre-commit && chmod +x .husky/pre-commit`,
    );
    expect(result.ran).toBe(true);
    hostGit(world.workspace, 'commit', '-q', '--allow-empty', '-m', 'by the person');
    expect(ran()).toBe(!confined);
  }, 60_000);

  test(`a bare repository's post-receive ${confined ? 'cannot be planted' : 'runs at the person’s git push'}`, async () => {
    const result = await run(
      server,
      `printf '${HOOK}' > remote.git/hooks/post-receive && chmod +x remote.git/hooks/post-receive`,
    );
    expect(result.ran).toBe(true);
    const marker = path.join(world.workspace, 'HOOK-RAN');
    execFileSync('rm', ['-f', marker]);
    hostGit(world.workspace, 'push', '-q', 'remote.git', 'HEAD:refs/heads/pushed');
    expect(existsSync(marker)).toBe(!confined);
  }, 60_000);

  test.each([
    ['cp', "printf 'script-shell=/tmp/x\\n' > /tmp/n && cp /tmp/n .npmrc"],
    ['mv', "printf 'script-shell=/tmp/x\\n' > /tmp/n && mv /tmp/n .npmrc"],
    ['dd', "printf 'script-shell=/tmp/x\\n' | dd of=.npmrc status=none"],
    ['python3', `python3 -c "open('.npmrc','w').write('script-shell=/tmp/x')"`],
  ])(
    `the project's .npmrc written by %s ${confined ? 'stays unwritten' : 'is written'}`,
    async (_tool, command) => {
      execFileSync('rm', ['-f', path.join(world.workspace, '.npmrc')]);
      await run(server, command);
      expect(readText(path.join(world.workspace, '.npmrc')).includes('script-shell')).toBe(!confined);
    },
    60_000,
  );

  test(`a readOnly .envrc that does not exist ${confined ? 'gets a read-only placeholder' : 'can be created'}`, async () => {
    const result = await run(server, "printf 'touch ~/pwned\\n' > .envrc; echo rc=$?");
    expect(readText(path.join(world.workspace, '.envrc')).includes('pwned')).toBe(!confined);
    if (confined) {
      expect(result.output).toMatch(/Read-only file system/);
      // The placeholder's mount point stays on the host: an empty file.
      expect(statSync(path.join(world.workspace, '.envrc')).size).toBe(0);
    }
  }, 60_000);

  test(`the parent of a hidden path inside the workspace ${confined ? 'cannot be renamed aside' : 'can be renamed'}`, async () => {
    const result = await run(
      server,
      "mv conf conf2 && mkdir conf && printf 'planted' > conf/secret.env; echo rc=$?",
    );
    expect(result.ran).toBe(true);
    expect(readText(path.join(world.workspace, 'conf', 'secret.env')).includes(world.secret)).toBe(confined);
    if (confined) expect(result.output).toMatch(/Device or resource busy|busy/);
  }, 60_000);
});

describe('a policy takes an entry out of the run-later set, with its reason', () => {
  let world: SandboxWorld;
  let server: WireServer;

  beforeAll(() => {
    world = makeWorld({
      sandbox: section('required', [
        '    runLater:',
        '      remove:',
        "        - { path: .husky/, reason: 'husky install runs in the sandbox' }",
        "        - { path: core.hooksPath, reason: 'husky install runs in the sandbox' }",
      ]),
    });
    prepare(world);
    server = serveIn(world);
  }, 60_000);
  afterAll(async () => {
    await server?.dispose();
    world?.dispose();
  });

  test('.husky/ is writable again; .npmrc stays protected', async () => {
    const result = await run(
      server,
      "mkdir -p .husky && printf 'x' > .husky/pre-commit && printf 'y' > .npmrc",
    );
    expect(readText(path.join(world.workspace, '.husky', 'pre-commit'))).toBe('x');
    expect(readText(path.join(world.workspace, '.npmrc'))).toBe('');
    expect(result.output).toMatch(/Read-only file system|Permission denied/);
  }, 60_000);
});
