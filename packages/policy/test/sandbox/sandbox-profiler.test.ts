import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parsePolicyText } from '../../src/policy-file/load-policy.js';
import { SandboxProfiler } from '../../src/sandbox/sandbox-profiler.js';

/** Real repositories on disk: a plain one, a linked worktree, a submodule dir, one without hooks. */
/** Paths of the test's own, without the system secrets and the host's sockets every profile hides. */
const ours = (paths: readonly string[]): string[] =>
  paths.filter((p) => !p.startsWith('/etc/') && statSync(p, { throwIfNoEntry: false })?.isSocket() !== true);

describe('SandboxProfiler', () => {
  let root: string;
  let ws: string;

  beforeEach(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'termgate-profiler-')));
    ws = join(root, 'ws');
    mkdirSync(ws);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const profiler = (section: string, protect = { readOnly: [] as string[], hidden: [] as string[] }) =>
    new SandboxProfiler(
      parsePolicyText(`default: allow\nsandbox:\n${section}\n`, join(root, 'p.yaml')).sandbox,
      {
        privateTmp: '/private/tmp',
        protect,
      },
    );

  it('makes whole git dirs read-only: the workspace repo, its subdirectories, a .git file, its gitdir and commondir', () => {
    execFileSync('git', ['init', '-q', ws]);
    execFileSync('git', ['init', '-q', join(ws, 'lib')]);
    const external = join(ws, 'vendor-gitdir');
    mkdirSync(join(ws, 'main-gitdir'), { recursive: true });
    mkdirSync(external);
    writeFileSync(join(external, 'commondir'), '../main-gitdir\n');
    mkdirSync(join(ws, 'vendor'));
    writeFileSync(join(ws, 'vendor', '.git'), 'gitdir: ../vendor-gitdir\n');
    const p = profiler(`  mode: required\n  filesystem: { writable: ['${ws}'] }`).profile(ws);
    expect([...p.filesystem.readOnly].sort()).toEqual(
      [
        join(ws, '.git'),
        join(ws, 'lib/.git'),
        join(ws, 'vendor/.git'),
        external,
        join(ws, 'main-gitdir'),
      ].sort(),
    );
    // Their parents inside the writable directory are bound onto themselves, so they cannot be moved aside.
    expect(p.filesystem.writable).toEqual(expect.arrayContaining([ws, join(ws, 'lib'), join(ws, 'vendor')]));
  });

  it('follows no symlink and reads no FIFO: planted pointers are skipped, nothing is created', () => {
    const secret = join(root, 'secret');
    mkdirSync(secret);
    mkdirSync(join(ws, 'a'));
    execFileSync('ln', ['-s', secret, join(ws, 'a', '.git')]);
    mkdirSync(join(ws, 'b'));
    writeFileSync(join(ws, 'b', '.git'), `gitdir: ${join(ws, 'link')}\n`);
    execFileSync('ln', ['-s', secret, join(ws, 'link')]);
    mkdirSync(join(ws, 'c'));
    execFileSync('mkfifo', [join(ws, 'c', '.git')]);
    const p = profiler(`  mode: required\n  filesystem: { writable: ['${ws}'] }`).profile(ws);
    expect(p.filesystem.readOnly).toEqual([join(ws, 'b/.git')]);
    expect(readdirSync(secret)).toEqual([]);
  });

  it('finds the repo above a deep cwd, and protects no git dir with protectGit: false', () => {
    execFileSync('git', ['init', '-q', join(ws, 'a')]);
    const deep = join(ws, 'a', 'b', 'c');
    mkdirSync(deep, { recursive: true });
    expect(
      profiler(`  mode: required\n  filesystem: { writable: ['${ws}'] }`).profile(deep).filesystem.readOnly,
    ).toEqual([join(ws, 'a/.git')]);
    expect(
      profiler(`  mode: required\n  filesystem: { writable: ['${ws}'], protectGit: false }`).profile(deep)
        .filesystem.readOnly,
    ).toEqual([]);
  });

  it('protects the git dir of a repository two levels below the writable root when the cwd is inside it', () => {
    // Neither the root nor its direct subdirectories hold it: only the walk up from the cwd finds it.
    execFileSync('git', ['init', '-q', join(ws, 'x', 'y')]);
    const deep = join(ws, 'x', 'y', 'z');
    mkdirSync(deep, { recursive: true });
    const p = profiler(`  mode: required\n  filesystem: { writable: ['${ws}'] }`);
    expect(p.profile(deep).filesystem.readOnly).toContain(join(ws, 'x/y/.git'));
    expect(p.profile(join(ws, 'x', 'y')).filesystem.readOnly).toContain(join(ws, 'x/y/.git'));
    // From the root, the repository is out of the scan's reach (the documented depth).
    expect(p.profile(ws).filesystem.readOnly).not.toContain(join(ws, 'x/y/.git'));
  });

  it('pins the parents of a hidden path inside a writable directory, so they cannot be renamed aside', () => {
    mkdirSync(join(ws, 'conf', 'deep'), { recursive: true });
    writeFileSync(join(ws, 'conf', 'deep', 'secret.env'), 'x');
    const p = profiler(
      `  mode: required\n  filesystem: { writable: ['${ws}'], hidden: ['${ws}/conf/deep/secret.env'] }`,
    ).profile(ws);
    expect(p.filesystem.writable).toEqual(expect.arrayContaining([join(ws, 'conf'), join(ws, 'conf/deep')]));
  });

  it('gives a missing readOnly path a placeholder (a directory when written with a trailing /), and refuses a dangling symlink there', () => {
    const p = profiler(
      `  mode: required\n  filesystem: { writable: ['${ws}'], readOnly: ['${ws}/.envrc', '${ws}/conf/'] }`,
    );
    const fs = p.profile(ws).filesystem;
    expect(fs.placeholderFiles).toContain(join(ws, '.envrc'));
    expect(fs.placeholderDirectories).toContain(join(ws, 'conf'));
    execFileSync('ln', ['-s', join(root, 'nowhere'), join(ws, '.envrc')]);
    expect(() => p.profile(ws)).toThrow(/\.envrc is a symlink to a path that does not exist/);
  });

  it('refuses a hidden or read-only path that now leads through a symlink', () => {
    mkdirSync(join(ws, 'conf'));
    writeFileSync(join(ws, 'conf', 'secret.env'), 'x');
    const p = profiler(
      `  mode: required\n  filesystem: { writable: ['${ws}'], hidden: ['${ws}/conf/secret.env'] }`,
    );
    expect(ours(p.profile(ws).filesystem.hiddenFiles)).toEqual([join(ws, 'conf/secret.env')]);
    execFileSync('mv', [join(ws, 'conf'), join(ws, 'conf2')]);
    execFileSync('ln', ['-s', join(ws, 'conf2'), join(ws, 'conf')]);
    expect(() => p.profile(ws)).toThrow(/conf\/secret\.env now resolves through a symlink/);
  });

  it('splits hidden paths into directories and files, skips missing ones, and adds protected paths', () => {
    mkdirSync(join(root, 'secrets'));
    writeFileSync(join(root, 'token'), 'x');
    const p = profiler(
      `  mode: required\n  filesystem: { writable: ['${ws}'], hidden: ['${root}/secrets', '${root}/token', '${root}/missing'] }\n  network: none`,
      { readOnly: [join(ws, 'policy.yaml'), join(root, 'elsewhere')], hidden: [join(root, 'token')] },
    );
    writeFileSync(join(ws, 'policy.yaml'), '');
    const profile = p.profile(ws);
    expect(ours(profile.filesystem.hiddenDirectories)).toEqual([join(root, 'secrets')]);
    expect(ours(profile.filesystem.hiddenFiles)).toEqual([join(root, 'token')]);
    // Only protected paths inside a writable directory need a read-only bind.
    expect(profile.filesystem.readOnly).toEqual([join(ws, 'policy.yaml')]);
    expect(ours(profile.filesystem.hiddenFiles)).toEqual([join(root, 'token')]);
    expect(profile.filesystem.tmp).toBe('/private/tmp');
    expect(profile.network).toBe('none');
  });

  it('maps the network: an allowlist is the proxy; the default is none', () => {
    expect(profiler(`  mode: required\n  network: { allow: [example.org] }`).profile(ws).network).toBe(
      'proxy',
    );
    expect(profiler('  mode: required').profile(ws).network).toBe('none');
    expect(profiler('  mode: required\n  network: all').profile(ws).network).toBe('all');
  });
});

describe('the sandbox section of a policy file', () => {
  const invalid = (text: string) => {
    try {
      parsePolicyText(text, '/p/policy.yaml');
    } catch (error) {
      return error as { issues: { line: number; column: number; key: string; message: string }[] };
    }
    throw new Error('expected the policy to be refused');
  };

  it('defaults: without the section the sandbox is off; with it, the workspace is writable, git protected, /tmp private, network none', () => {
    expect(parsePolicyText('default: allow\n', '/p/policy.yaml').sandbox.mode).toBe('off');
    const section = parsePolicyText(
      'default: allow\nsandbox: { mode: required }\n',
      '/p/policy.yaml',
    ).sandbox;
    expect(section).toMatchObject({
      mode: 'required',
      writable: [realpathSync(process.cwd())],
      protectGit: true,
      privateTmp: true,
      network: 'none',
    });
  });

  it('defaults of the view: HOME, /root, /run, /var/run emptied; git config and HOME toolchains readable; no socket allowed', () => {
    const section = parsePolicyText(
      'default: allow\nsandbox: { mode: required }\n',
      '/p/policy.yaml',
    ).sandbox;
    const home = process.env.HOME!;
    expect(section.allowlistedTrees).toEqual(
      [home, '/root', '/run', '/var/run'].map((p) => {
        try {
          return realpathSync(p);
        } catch {
          return p;
        }
      }),
    );
    expect(section.readable).toEqual(
      expect.arrayContaining([`${home}/.gitconfig`, `${home}/.nvm`, `${home}/.cargo/bin`]),
    );
    expect(section.readable).not.toContain(`${home}/.cargo`);
    expect(section.unixSockets).toEqual({ allow: [] });
  });

  it.each([
    ["  network: { allow: ['*'] }", 'sandbox.network.allow[0]', /bare "\*"/, 4],
    ["  network: { allow: [ok.org, '*.com'] }", 'sandbox.network.allow[1]', /too broad/, 4],
    ['  network: some', 'sandbox.network', /must be none, all, or \{allow: \[host, …\]\}/, 4],
    ['  mode: maybe', 'sandbox.mode', /must be one of: required, off/, 3],
    ['  filesystem: { writeable: [x] }', 'sandbox.filesystem.writeable', /unknown key "writeable"/, 4],
    ['  unixSockets: { allowed: [x] }', 'sandbox.unixSockets.allowed', /unknown key "allowed"/, 4],
  ])('rejects %s, located by line and key', (line, key, message, lineNumber) => {
    const text = `default: allow\nsandbox:\n${line.includes('mode:') ? '' : '  mode: required\n'}${line}\n`;
    const issue = invalid(text).issues[0]!;
    expect(issue.key).toBe(key);
    expect(issue.message).toMatch(message);
    expect(issue.line).toBe(lineNumber);
  });
});
