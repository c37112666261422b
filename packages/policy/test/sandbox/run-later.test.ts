import { execFileSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { parsePolicyText } from '../../src/policy-file/load-policy.js';
import { runLaterPaths } from '../../src/sandbox/run-later.js';

/** Real repositories and git's own configuration reading (`git config`), in a scratch directory. */
describe('runLaterPaths', () => {
  let root: string;
  let ws: string;
  const savedGlobal = process.env.GIT_CONFIG_GLOBAL;

  beforeEach(() => {
    root = realpathSync(mkdtempSync(join('/var/tmp', 'termgate-run-later-')));
    ws = join(root, 'ws');
    mkdirSync(ws);
    process.env.GIT_CONFIG_GLOBAL = join(root, 'global.gitconfig');
    writeFileSync(process.env.GIT_CONFIG_GLOBAL, '');
  });
  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
    if (savedGlobal === undefined) delete process.env.GIT_CONFIG_GLOBAL;
    else process.env.GIT_CONFIG_GLOBAL = savedGlobal;
  });

  it('in a repository: hook managers’ files, existing read-only and missing as placeholders; no package entries without package.json', () => {
    execFileSync('git', ['init', '-q', ws]);
    writeFileSync(join(ws, 'lefthook.yml'), 'pre-commit: {}\n');
    const paths = runLaterPaths([ws], ws, undefined);
    expect(paths.readOnly).toEqual([join(ws, 'lefthook.yml')]);
    expect(paths.placeholderDirectories).toEqual([join(ws, '.husky')]);
    expect(paths.placeholderFiles).toEqual(
      expect.arrayContaining([join(ws, '.pre-commit-config.yaml'), join(ws, 'lefthook-local.yml')]),
    );
    expect(paths.placeholderFiles).not.toContain(join(ws, '.npmrc'));
  });

  it('where a package.json is: .npmrc, .yarnrc, .yarnrc.yml, also in a directory that is no repository', () => {
    mkdirSync(join(ws, 'pkg'));
    writeFileSync(join(ws, 'pkg', 'package.json'), '{}');
    writeFileSync(join(ws, 'pkg', '.npmrc'), '');
    const paths = runLaterPaths([ws], ws, undefined);
    expect(paths.readOnly).toEqual([join(ws, 'pkg', '.npmrc')]);
    expect(paths.placeholderFiles.sort()).toEqual([
      join(ws, 'pkg', '.yarnrc'),
      join(ws, 'pkg', '.yarnrc.yml'),
    ]);
  });

  it('a workspace full of repositories costs one git process, and a package cache is not scanned at all', () => {
    // A counting `git` first on PATH: each call is one line in its log.
    const bin = join(root, 'bin');
    mkdirSync(bin);
    const log = join(root, 'git-calls.log');
    const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    writeFileSync(join(bin, 'git'), `#!/bin/sh\necho "$*" >> '${log}'\nexec '${realGit}' "$@"\n`, {
      mode: 0o755,
    });
    for (let i = 0; i < 40; i++) execFileSync(realGit, ['init', '-q', join(ws, `r${i}`)]);
    execFileSync(realGit, ['-C', join(ws, 'r7'), 'config', 'core.hooksPath', 'hooks7']);
    const cache = join(root, 'cache');
    for (let i = 0; i < 40; i++) mkdirSync(join(cache, `x${i}`, '.git'), { recursive: true });
    const savedPath = process.env.PATH;
    process.env.PATH = `${bin}:${savedPath ?? ''}`;
    let paths: ReturnType<typeof runLaterPaths>;
    try {
      paths = runLaterPaths([ws, cache], ws, undefined);
    } finally {
      process.env.PATH = savedPath;
    }
    // One read of the global and system value, one for the repository whose config sets the key.
    const calls = readFileSync(log, 'utf8').trim().split('\n');
    expect(calls).toHaveLength(2);
    expect(paths.placeholderDirectories).toContain(join(ws, 'r7', 'hooks7'));
    expect(paths.placeholderDirectories).toContain(join(ws, 'r39', '.husky'));
    expect([...paths.readOnly, ...paths.placeholderDirectories].some((p) => p.startsWith(cache))).toBe(false);
  });

  it('core.hooksPath from the repository, relative to the working tree, and from the global config', () => {
    execFileSync('git', ['init', '-q', join(ws, 'a')]);
    execFileSync('git', ['-C', join(ws, 'a'), 'config', 'core.hooksPath', 'tools/hooks']);
    mkdirSync(join(ws, 'a', 'tools', 'hooks'), { recursive: true });
    execFileSync('git', ['init', '-q', join(ws, 'b')]);
    // Global, relative: each repository resolves it against its own working tree, as git runs hooks there.
    writeFileSync(process.env.GIT_CONFIG_GLOBAL!, '[core]\n\thooksPath = ../shared-hooks\n');
    const paths = runLaterPaths([ws], ws, undefined);
    expect(paths.readOnly).toContain(join(ws, 'a', 'tools', 'hooks'));
    expect(paths.placeholderDirectories).toContain(join(ws, 'shared-hooks'));
    // Outside every writable root: already read-only, not listed.
    expect(paths.placeholderDirectories.some((p) => p.startsWith(join(root, 'shared-hooks')))).toBe(false);
  });

  it('a bare repository is read-only as a whole, found by lstat; a HEAD that is a symlink does not count', () => {
    execFileSync('git', ['init', '-q', '--bare', join(ws, 'remote.git')]);
    mkdirSync(join(ws, 'fake', 'objects'), { recursive: true });
    mkdirSync(join(ws, 'fake', 'refs'));
    symlinkSync(join(ws, 'remote.git', 'HEAD'), join(ws, 'fake', 'HEAD'));
    const paths = runLaterPaths([ws], ws, undefined);
    expect(paths.readOnly).toContain(join(ws, 'remote.git'));
    expect(paths.readOnly).not.toContain(join(ws, 'fake'));
  });

  it('refuses an entry that is a symlink, and follows a policy’s add and remove', () => {
    execFileSync('git', ['init', '-q', ws]);
    const policy = parsePolicyText(
      [
        'default: allow',
        'sandbox:',
        '  mode: required',
        '  filesystem:',
        '    runLater:',
        "      add: [{ path: .envrc, reason: direnv }, { path: 'tools/hooks/', reason: ours }]",
        "      remove: [{ path: .husky/, reason: 'husky install' }]",
      ].join('\n'),
      join(root, 'p.yaml'),
    ).sandbox.runLater;
    const paths = runLaterPaths([ws], ws, policy);
    expect(paths.placeholderFiles).toContain(join(ws, '.envrc'));
    expect(paths.placeholderDirectories).toEqual([join(ws, 'tools', 'hooks')]);
    symlinkSync(join(root, 'elsewhere'), join(ws, '.pre-commit-config.yaml'));
    expect(() => runLaterPaths([ws], ws, policy)).toThrow(/\.pre-commit-config\.yaml is a symlink/);
  });
});

describe('sandbox.filesystem.runLater in a policy file', () => {
  const issues = (text: string): string[] => {
    try {
      parsePolicyText(text, '/p/policy.yaml');
    } catch (error) {
      return (error as { issues: { key: string; message: string }[] }).issues.map(
        (i) => `${i.key}: ${i.message}`,
      );
    }
    return [];
  };
  const policy = (runLater: string): string =>
    `default: allow\nsandbox:\n  mode: required\n  filesystem:\n    runLater: ${runLater}\n`;

  it('takes out only entries of the set, adds only relative paths, and wants a reason for each', () => {
    expect(issues(policy('{ remove: [{ path: Makefile, reason: x }] }'))[0]).toMatch(
      /^sandbox\.filesystem\.runLater\.remove\[0\]\.path: Makefile is not in the run-later set/,
    );
    expect(issues(policy('{ add: [{ path: /etc/x, reason: x }] }'))[0]).toMatch(
      /relative to each project directory/,
    );
    expect(issues(policy('{ add: [{ path: ../x, reason: x }] }'))[0]).toMatch(/may not contain \. or \.\./);
    expect(issues(policy('{ add: [{ path: .envrc }] }'))[0]).toMatch(/reason/);
    expect(issues(policy("{ remove: [{ path: core.hooksPath, reason: 'husky install' }] }"))).toEqual([]);
  });
});

describe('runLaterPaths and a configuration git cannot read', () => {
  let root: string;
  beforeEach(() => {
    root = realpathSync(mkdtempSync(join('/var/tmp', 'termgate-run-later-')));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('refuses when reading it stalls (a FIFO planted as a config), and skips a repository git cannot open', () => {
    const ws = join(root, 'ws');
    mkdirSync(join(ws, 'stale'), { recursive: true });
    writeFileSync(join(ws, 'stale', '.git'), `gitdir: ${join(root, 'gone')}\n`);
    expect(runLaterPaths([ws], ws, undefined).placeholderDirectories).toContain(join(ws, 'stale', '.husky'));
    execFileSync('git', ['init', '-q', join(ws, 'planted')]);
    rmSync(join(ws, 'planted', '.git', 'config'));
    execFileSync('mkfifo', [join(ws, 'planted', '.git', 'config')]);
    expect(() => runLaterPaths([ws], ws, undefined)).toThrow(/could not read the configuration .* in time/);
  }, 20_000);
});
