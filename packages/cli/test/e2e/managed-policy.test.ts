/**
 * `termgate serve` under a managed policy layer (`--managed-policy`, the
 * administrator's and the tests' way where /etc/termgate/managed.yaml does
 * not exist), driven by a real MCP client: the managed deny stands against a
 * workspace allow, the trail's records name both layers' sha256 and the
 * deciding layer; a managed file that is invalid, unreadable or missing stops
 * serve with exit 1 before anything runs.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { assertServerBuilt, REPO_ROOT, SERVER_BIN } from './support/wire-server.js';

const MANAGED = `default: allow
env: { allowClientSet: ['*'] }
rules:
  - { id: no-push, decision: deny, program: git, argvPrefix: [[push]], reason: pushes go through CI }
tests:
  - { command: git push origin main, expect: deny, rule: no-push }
`;

const WORKSPACE = `default: deny
rules:
  - { id: echo, decision: allow, program: echo }
  - { id: git, decision: allow, program: git, match: ['git push origin'] }
`;

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

interface TrailRecord {
  readonly event: { readonly action: string };
  readonly rule?: { readonly id: readonly string[] };
  readonly process?: { readonly command_line?: string };
  readonly termgate: {
    readonly decision?: string;
    readonly policy?: {
      readonly path?: string;
      readonly sha256: string;
      readonly layer?: string;
      readonly managed?: { readonly path?: string; readonly sha256: string };
    };
  };
}

function records(trail: string): TrailRecord[] {
  return readFileSync(trail, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as TrailRecord);
}

describe('serve under a managed policy', () => {
  let dir: string;
  let managedPath: string;
  let workspacePath: string;

  beforeAll(() => {
    assertServerBuilt();
    // The system file would be in force and --managed-policy refused: this machine must not have one.
    expect(existsSync('/etc/termgate/managed.yaml')).toBe(false);
    dir = mkdtempSync(path.join(tmpdir(), 'termgate-e2e-managed-'));
    managedPath = path.join(dir, 'managed.yaml');
    workspacePath = path.join(dir, 'workspace.yaml');
    writeFileSync(managedPath, MANAGED);
    writeFileSync(workspacePath, WORKSPACE);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('a workspace allow does not open a managed deny; the trail names both layers and who decided', async () => {
    const trail = path.join(dir, 'trail', 'audit.jsonl');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        SERVER_BIN,
        'serve',
        '--policy',
        workspacePath,
        '--managed-policy',
        managedPath,
        '--audit',
        trail,
      ],
      cwd: REPO_ROOT,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const client = new Client({ name: 'termgate-e2e-managed', version: '0.0.0' });
    await client.connect(transport);
    const refused = await client.callTool({
      name: 'terminal_create',
      arguments: { command: 'git push origin main' },
    });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toContain('no-push');
    const allowed = await client.callTool({
      name: 'terminal_create',
      arguments: { command: 'echo layered' },
    });
    expect(allowed.isError).toBeFalsy();
    // The managed layer leaves echo open; the workspace's default deny still closes what it does not allow.
    const closed = await client.callTool({ name: 'terminal_create', arguments: { command: 'make' } });
    expect(closed.isError).toBe(true);
    await client.close();

    // The workspace's try to loosen is told, naming its rule and the managed one.
    expect(stderr).toContain('rules[1] (git)');
    expect(stderr).toContain('managed:no-push');

    const all = records(trail);
    const start = all.find((r) => r.event.action === 'server-start');
    expect(start?.termgate.policy).toEqual({
      path: workspacePath,
      sha256: sha256(WORKSPACE),
      managed: { path: managedPath, sha256: sha256(MANAGED) },
    });
    const creates = all.filter((r) => r.event.action === 'terminal-create');
    expect(
      creates.map((r) => [
        r.process?.command_line,
        r.termgate.decision,
        r.termgate.policy?.layer,
        r.rule?.id,
      ]),
    ).toEqual([
      ['git push origin main', 'deny', 'managed', ['managed:no-push']],
      ['echo layered', 'allow', 'workspace', ['echo']],
      ['make', 'deny', 'workspace', undefined],
    ]);
    for (const r of creates) expect(r.termgate.policy?.managed?.sha256).toBe(sha256(MANAGED));
  });

  const refusals: readonly { readonly name: string; readonly make: () => string; readonly says: RegExp }[] = [
    {
      name: 'invalid',
      make: () => {
        const p = path.join(dir, 'invalid.yaml');
        writeFileSync(p, 'default: allow\nrules:\n  - { id: x, decision: perhaps, program: ls }\n');
        return p;
      },
      says: /invalid policy file .*invalid\.yaml/,
    },
    {
      // A directory: unreadable as a file even to root (CI runs as root, where mode 000 would still read).
      name: 'unreadable',
      make: () => {
        const p = path.join(dir, 'unreadable.yaml');
        mkdirSync(p, { recursive: true });
        return p;
      },
      says: /cannot read policy file .*unreadable\.yaml: EISDIR/,
    },
    {
      name: 'missing (named, so required)',
      make: () => path.join(dir, 'no-such-managed.yaml'),
      says: /cannot read policy file .*no-such-managed\.yaml: ENOENT/,
    },
    {
      name: 'valid, but its embedded tests fail once the workspace policy is added',
      make: () => {
        const p = path.join(dir, 'tests-fail.yaml');
        writeFileSync(p, 'default: allow\ntests:\n  - { command: make, expect: allow }\n');
        return p;
      },
      says: /embedded test\(s\) of the managed policy .*tests-fail\.yaml failed/,
    },
  ];

  test.each(refusals)('a managed file that is $name stops serve before anything runs', ({ make, says }) => {
    const managed = make();
    const trail = path.join(dir, `trail-${path.basename(managed)}`, 'audit.jsonl');
    const create = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'terminal_create', arguments: { command: 'echo should-not-run' } },
    });
    const run = spawnSync(
      process.execPath,
      [SERVER_BIN, 'serve', '--policy', workspacePath, '--managed-policy', managed, '--audit', trail],
      { cwd: REPO_ROOT, input: `${create}\n`, encoding: 'utf8', timeout: 60_000 },
    );
    expect(run.stderr).toMatch(says);
    expect(run.stderr).toContain('refusing to start');
    expect(run.status).toBe(1);
    expect(run.stdout).not.toContain('should-not-run');
    // Nothing was judged or recorded as run.
    const recorded = existsSync(trail) ? records(trail).map((r) => r.event.action) : [];
    expect(recorded.filter((a) => a.startsWith('terminal-'))).toEqual([]);
  });
});
