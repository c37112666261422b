import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parsePolicyText } from '../../src/policy-file/load-policy.js';
import { MAX_MOUNTS, MAX_SCANNED_ENTRIES } from '../../src/sandbox/git-dir-scan.js';
import { SandboxProfiler } from '../../src/sandbox/sandbox-profiler.js';

/** Directory floods in writable roots: bounded work per create, and a refusal that names the directory. */
describe('SandboxProfiler: git dir scan under a directory flood', () => {
  let root: string;
  let ws: string;
  let cache: string;

  beforeEach(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'termgate-git-scan-')));
    ws = join(root, 'ws');
    cache = join(root, 'home', '.npm');
    mkdirSync(ws);
    mkdirSync(cache, { recursive: true });
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const profiler = () =>
    new SandboxProfiler(
      parsePolicyText(
        `default: allow\nsandbox:\n  mode: required\n  filesystem: { writable: ['${ws}', '${cache}'] }\n`,
        join(root, 'p.yaml'),
      ).sandbox,
      { privateTmp: '/private/tmp', protect: { readOnly: [], hidden: [] } },
    );

  it('does not look into a package cache: 1600 repositories in ~/.npm cost nothing and add no mount', () => {
    for (let i = 0; i < 1600; i++) mkdirSync(join(cache, `x${i}`, '.git'), { recursive: true });
    execFileSync('git', ['init', '-q', join(ws, 'lib')]);
    const profile = profiler().profile(ws);
    expect(profile.filesystem.readOnly).toEqual([join(ws, 'lib/.git')]);
  });

  it('still protects a repository that is the cache root itself or holds the cwd', () => {
    mkdirSync(join(cache, '.git'));
    mkdirSync(join(cache, 'deep', 'repo', '.git'), { recursive: true });
    const profile = profiler().profile(join(cache, 'deep', 'repo'));
    expect([...profile.filesystem.readOnly].sort()).toEqual(
      [join(cache, '.git'), join(cache, 'deep', 'repo', '.git')].sort(),
    );
  });

  it('refuses, naming the directory, a workspace root with more entries than it reads', () => {
    for (let i = 0; i <= MAX_SCANNED_ENTRIES; i++) mkdirSync(join(ws, `d${i}`));
    expect(() => profiler().profile(ws)).toThrow(
      new RegExp(`${ws} holds more than ${MAX_SCANNED_ENTRIES} entries`),
    );
  });

  it('refuses, naming the directory, a profile with more mounts than bwrap can take', () => {
    for (let i = 0; i <= MAX_MOUNTS; i++) mkdirSync(join(ws, `r${i}`, '.git'), { recursive: true });
    expect(() => profiler().profile(ws)).toThrow(
      new RegExp(`mounts \\(at most ${MAX_MOUNTS}\\): ${ws} holds`),
    );
  });
});
