import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parsePolicyText } from '../../src/policy-file/load-policy.js';
import { boundSocketPaths } from '../../src/sandbox/host-sockets.js';
import { SandboxProfiler } from '../../src/sandbox/sandbox-profiler.js';

/** A real listening Unix socket on the host, bound by a python3 process (resolves once it is in the kernel's table). */
async function listen(path: string): Promise<ChildProcess> {
  const child = spawn('python3', [
    '-c',
    'import socket,sys,time\ns=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(); print("up", flush=True); time.sleep(120)',
    path,
  ]);
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    child.once('exit', () => reject(new Error('the socket server exited')));
  });
  return child;
}

describe('the allowlisted view of a profile', () => {
  let root: string;
  let home: string;
  let ws: string;
  const children: ChildProcess[] = [];

  beforeEach(() => {
    root = realpathSync(mkdtempSync(join('/var/tmp', 'termgate-view-')));
    home = join(root, 'home');
    ws = join(root, 'ws');
    mkdirSync(join(home, '.nvm'), { recursive: true });
    mkdirSync(ws);
    writeFileSync(join(home, '.gitconfig'), '');
  });
  afterEach(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
    rmSync(root, { recursive: true, force: true });
  });

  const profile = (filesystem: string, extra = '', cwd = ws) =>
    new SandboxProfiler(
      parsePolicyText(
        `default: allow\nsandbox:\n  mode: required\n  filesystem: ${filesystem}\n${extra}`,
        join(root, 'p.yaml'),
      ).sandbox,
      { privateTmp: '/private/tmp', protect: { readOnly: [], hidden: [] } },
    ).profile(cwd);

  it('empties the trees and shows only the readable paths that exist inside them; a tree inside a writable root stays', () => {
    symlinkSync(join(home, '.nvm'), join(home, '.nvm-link'));
    const p = profile(
      `{ writable: ['${ws}', '${home}/.npm'], allowlistedTrees: ['${home}', '${ws}/inside'], readable: ['${home}/.gitconfig', '${home}/.nvm-link', '${home}/.absent', '/usr/bin'] }`,
    );
    expect(p.filesystem.emptied).toEqual([home]);
    // A link is shown at its own path (bwrap binds its target there); a path outside every tree needs no bind.
    expect(p.filesystem.readable).toEqual([join(home, '.gitconfig'), join(home, '.nvm-link')]);
  });

  it('defaults: HOME, /root, /run emptied (those that exist); hidden paths inside an emptied tree need no mount', () => {
    const saved = process.env.HOME;
    process.env.HOME = home;
    try {
      mkdirSync(join(home, '.ssh'));
      const p = profile(`{ writable: ['${ws}'], hidden: ['~/.ssh'] }`);
      expect(p.filesystem.emptied).toEqual(expect.arrayContaining([home, '/run']));
      expect(p.filesystem.readable).toEqual([join(home, '.gitconfig'), join(home, '.nvm')]);
      expect(p.filesystem.hiddenDirectories).not.toContain(join(home, '.ssh'));
      expect(p.filesystem.hiddenFiles).toContain('/etc/shadow');
    } finally {
      process.env.HOME = saved;
    }
  });

  it('covers a listening host socket the view shows, unless unixSockets.allow names it', async () => {
    const denied = join(ws, 'denied.sock');
    const allowed = join(root, 'allowed.sock');
    const inHome = join(home, 'agent.sock');
    for (const path of [denied, allowed, inHome]) children.push(await listen(path));
    expect(boundSocketPaths()).toEqual(expect.arrayContaining([denied, allowed, inHome]));
    const p = profile(
      `{ writable: ['${ws}'], allowlistedTrees: ['${home}'] }`,
      `  unixSockets: { allow: ['${allowed}'] }\n`,
    );
    expect(p.filesystem.hiddenFiles).toContain(denied);
    expect(p.filesystem.hiddenFiles).not.toContain(allowed);
    expect(p.filesystem.sockets).toEqual([allowed]);
    // Inside an emptied tree and nothing shown through it: not in the view, nothing to cover.
    expect(p.filesystem.hiddenFiles).not.toContain(inHome);
  });
});
