/**
 * The published package installs with one command and works from there:
 * `scripts/pack-cli.mjs` stages and `npm pack`s `termgate`, npm installs the
 * tarball into an empty prefix outside the repository (its dependencies
 * from the npm cache, else the registry), and the installed `termgate`
 * prints its version, passes `policy test` on the shipped default policy,
 * and serves the real v2 client (@modelcontextprotocol/client) under that
 * policy, sandbox on. Nothing of the workspace is reachable from the
 * install: no symlink into it, no `@termgate/*` import left in the bundle.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { TERMGATE_VERSION } from '../../src/version.js';
import { REPO_ROOT } from './support/wire-server.js';

/** The environment without what a pnpm or npm run sets for its children (a prefix, a registry, a user agent). */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(npm_|NPM_|PNPM_|pnpm_|NODE_PATH$)/.test(name)),
  );
}

/** Every file below `dir` (symlinks not followed). */
function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? walk(path) : [path];
  });
}

describe('the termgate package: npm pack, npm install, run', () => {
  let scratch: string;
  let prefix: string;
  let bin: string;
  let workspace: string;
  const env = cleanEnv();

  beforeAll(() => {
    // Outside /tmp (the sandbox's private /tmp would hide it) and outside the repository.
    scratch = mkdtempSync('/var/tmp/termgate-package-');
    prefix = join(scratch, 'prefix');
    workspace = join(scratch, 'project');
    mkdirSync(prefix);
    mkdirSync(workspace);
    mkdirSync(join(scratch, 'tmp'), { mode: 0o700 });
    const tarball = execFileSync(
      process.execPath,
      [join(REPO_ROOT, 'scripts/pack-cli.mjs'), '--out', join(scratch, 'tarball')],
      { encoding: 'utf8', env },
    ).trim();
    expect(tarball).toMatch(/termgate-\d+\.\d+\.\d+\.tgz$/);
    execFileSync(
      'npm',
      [
        'install',
        '--prefix',
        prefix,
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
        tarball,
      ],
      { cwd: prefix, encoding: 'utf8', env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    bin = join(prefix, 'node_modules/.bin/termgate');
  }, 300_000);

  afterAll(() => {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  test('the install holds nothing of the workspace: no link into it, no @termgate/* import', () => {
    const installed = join(prefix, 'node_modules');
    const repo = realpathSync(REPO_ROOT);
    for (const file of walk(installed)) {
      if (lstatSync(file).isSymbolicLink()) expect(realpathSync(file).startsWith(repo)).toBe(false);
    }
    const dist = join(installed, 'termgate/dist');
    for (const file of walk(dist).filter((f) => f.endsWith('.js'))) {
      expect(readFileSync(file, 'utf8')).not.toMatch(/["']@termgate\//);
    }
    const manifest = JSON.parse(readFileSync(join(installed, 'termgate/package.json'), 'utf8'));
    expect(manifest).toMatchObject({ name: 'termgate', engines: { node: expect.any(String) } });
    expect(manifest.private).toBeUndefined();
  });

  test('termgate --version', () => {
    expect(execFileSync(bin, ['--version'], { encoding: 'utf8', env, cwd: workspace })).toBe(
      `${TERMGATE_VERSION}\n`,
    );
  });

  test('termgate policy test on the shipped default policy passes', () => {
    const shipped = join(prefix, 'node_modules/termgate/policies/default.yaml');
    const result = spawnSync(bin, ['policy', 'test', shipped], { encoding: 'utf8', env, cwd: workspace });
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/\n\d+ passed, 0 failed\n$/);
    expect(result.status).toBe(0);
  });

  test('termgate serve from the install serves the v2 client, the default policy and sandbox on', async () => {
    let stderr = '';
    const transport = new StdioClientTransport({
      command: bin,
      // The trail in a directory of its own: serve refuses one that holds the writable workspace.
      args: ['serve', '--audit', join(scratch, 'trail', 'audit.jsonl')],
      cwd: workspace,
      // A TMPDIR of its own: the sandbox's runtime directory is made there, apart from other servers'.
      env: { ...(env as Record<string, string>), TMPDIR: join(scratch, 'tmp') },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const client = new Client(
      { name: 'termgate-package-test', version: '0.0.0' },
      { versionNegotiation: { mode: 'auto', probe: { timeoutMs: 15_000 } } },
    );
    try {
      await client.connect(transport);
      expect(client.getServerVersion()).toMatchObject({ name: 'termgate', version: TERMGATE_VERSION });
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('terminal_create');
      const result = await client.callTool(
        {
          name: 'terminal_create',
          arguments: { command: 'echo installed; touch made-here', waitSeconds: 20 },
        },
        { timeout: 30_000 },
      );
      if (result.isError) throw new Error(`refused: ${JSON.stringify(result.content)}\n${stderr}`);
      expect(result.structuredContent).toMatchObject({ exitCode: 0, output: 'installed\n' });
      expect(readdirSync(workspace)).toContain('made-here');
      // The policy in use is the installed package's own, and the sandbox is on.
      expect(stderr).toContain(
        `using the default policy ${resolve(prefix, 'node_modules/termgate/policies/default.yaml')}`,
      );
      expect(stderr).toMatch(/sandbox on \(bubblewrap\)/);
      // The installed code is out of reach of a sandboxed command.
      const rewrite = await client.callTool(
        {
          name: 'terminal_create',
          arguments: { command: `echo x >> ${join(prefix, 'node_modules/termgate/package.json')}` },
        },
        { timeout: 30_000 },
      );
      expect(JSON.parse(readFileSync(join(prefix, 'node_modules/termgate/package.json'), 'utf8')).name).toBe(
        'termgate',
      );
      expect(rewrite.structuredContent ?? rewrite.isError).toBeTruthy();
    } finally {
      await client.close();
    }
  }, 120_000);
});
