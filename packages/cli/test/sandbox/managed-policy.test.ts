/**
 * The managed policy file under the sandbox, with the server as root (CI)
 * and as an unprivileged user (nobody, through setpriv, when the tests run
 * as root; else the tests' own user): a command cannot rewrite, replace or
 * remove it, even placed inside the writable (here world-writable)
 * workspace, where only the always-on protection keeps it read-only; a
 * workspace policy that turns the sandbox off still runs every command
 * confined, because the managed layer requires it; and an administrator who
 * hides the file keeps it unreadable too.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { SERVER_BIN, WireServer } from '../e2e/support/wire-server.js';
import { auditRecords, makeWorld, run, type SandboxWorld } from './support/sandbox-fixture.js';

function managedText(hidden: boolean): string {
  return [
    'default: allow',
    "env: { allowClientSet: ['*'] }",
    'allowDynamic: true',
    'sandbox:',
    '  mode: required',
    '  filesystem:',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a policy placeholder, not a template
    "    writable: ['${SERVER_CWD}']",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a policy placeholder, not a template
    ...(hidden ? ["    hidden: ['${SERVER_CWD}/managed.yaml']"] : []),
    '  network: none',
    '',
  ].join('\n');
}

const asRoot = process.getuid?.() === 0;
const NOBODY = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--'];

/** serve in the world, as this process's user or (when root) as nobody. */
function serve(world: SandboxWorld, managed: string, unprivileged: boolean): WireServer {
  const args = ['--policy', world.policyPath, '--managed-policy', managed, '--audit', world.auditPath];
  const options = { cwd: world.workspace, env: { ...process.env, HOME: world.home } };
  if (!unprivileged || !asRoot) return WireServer.start(args, options);
  for (const dir of [world.root, world.workspace, world.home, path.join(world.root, 'state')])
    chmodSync(dir, 0o777);
  chmodSync(world.policyPath, 0o644);
  chmodSync(managed, 0o644);
  if (spawnSync(NOBODY[0]!, [...NOBODY.slice(1), 'test', '-r', SERVER_BIN]).status !== 0) {
    throw new Error(
      `user nobody cannot read ${SERVER_BIN}: this suite needs the checkout readable by other users`,
    );
  }
  return WireServer.start(args, { ...options, wrap: NOBODY });
}

describe.each([
  ['read-only, server as root', false, false],
  ['hidden by the administrator, server as root', true, false],
  ['read-only, server unprivileged', false, true],
  ['hidden by the administrator, server unprivileged', true, true],
] as const)('the managed policy file, %s', (_label, hidden, unprivileged) => {
  let world: SandboxWorld;
  let server: WireServer;
  let managed: string;
  let original: string;

  beforeAll(() => {
    // The workspace policy turns the sandbox off: the managed layer's `mode: required` must stand.
    world = makeWorld({ sandbox: '  mode: off' });
    managed = path.join(world.workspace, 'managed.yaml');
    original = managedText(hidden);
    writeFileSync(managed, original);
    server = serve(world, managed, unprivileged);
  });

  afterAll(async () => {
    await server.dispose();
    world.dispose();
  });

  test('the server started under the managed sandbox, whatever the workspace policy said', async () => {
    const result = await run(server, `echo x > ${path.join(world.outside, 'plain.txt')}`);
    expect(result.ran).toBe(true);
    expect(result.output).toMatch(/Read-only file system/);
    const start = auditRecords(world).find(
      (r) => (r.event as { action: string }).action === 'server-start',
    ) as { termgate: { sandbox: { mode: string }; policy: { managed: { path: string } } } };
    expect(start.termgate.sandbox.mode).toBe('required');
    expect(start.termgate.policy.managed.path).toBe(managed);
  });

  test.each([
    ['append to it', 'echo "  - { id: x, decision: allow, program: sh }" >> managed.yaml'],
    ['rewrite it in place', "sed -i 's/default: allow/default: deny/' managed.yaml"],
    ['replace it by rename', 'echo "default: allow" > new.yaml && mv -f new.yaml managed.yaml'],
    ['remove it', 'rm -f managed.yaml'],
    ['truncate it with python', `/usr/bin/python3 -c 'open("managed.yaml","w").write("default: allow\\n")'`],
  ])('a command cannot %s', async (_name, command) => {
    const result = await run(server, command);
    expect(result.ran).toBe(true);
    expect(readFileSync(managed, 'utf8')).toBe(original);
  });

  test(
    hidden ? 'a command cannot read it' : 'a command can read it (the administrator did not hide it)',
    async () => {
      const result = await run(server, 'cat managed.yaml; echo "rc=$?"');
      expect(result.ran).toBe(true);
      if (hidden) expect(result.output).not.toContain('mode: required');
      else expect(result.output).toContain('mode: required');
    },
  );
});
