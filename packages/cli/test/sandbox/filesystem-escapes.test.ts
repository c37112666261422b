/**
 * The escape suite, filesystem half: each line is one that the policy's
 * parser allows (default allow, no `writes` section) but that writes or
 * reads what the policy's sandbox protects. Every case runs twice under the
 * same policy, once with `sandbox.mode: off` (the escape works: that is the
 * gap) and once with `mode: required` (the kernel stops it), and checks the
 * host's files, not the command's word for it.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { SERVER_BIN, WireServer } from '../e2e/support/wire-server.js';
import {
  auditRecords,
  makeWorld,
  readText,
  run,
  type SandboxWorld,
  serveIn,
} from './support/sandbox-fixture.js';

const sandboxSection = (mode: 'required' | 'off'): string =>
  [
    `  mode: ${mode}`,
    '  filesystem:',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a policy placeholder, not a template
    "    writable: ['${SERVER_CWD}']",
    "    hidden: ['~/.ssh']",
    '    privateTmp: false',
    '  network: none',
  ].join('\n');

interface EscapeCase {
  readonly name: string;
  readonly command: (w: SandboxWorld) => string;
  /** True when the escape reached the host. */
  readonly escaped: (w: SandboxWorld, output: string) => boolean;
}

const outsideFile = (w: SandboxWorld, name: string): string => path.join(w.outside, name);
const changed = (file: string, marker: string): boolean => readText(file).includes(marker);

const CASES: readonly EscapeCase[] = [
  {
    name: 'cp writes outside the writable roots',
    command: (w) => `cp source.txt ${outsideFile(w, 'cp.txt')}`,
    escaped: (w) => changed(outsideFile(w, 'cp.txt'), 'payload'),
  },
  {
    name: 'tee writes outside the writable roots',
    command: (w) => `echo tee-wrote | tee ${outsideFile(w, 'target.txt')}`,
    escaped: (w) => changed(outsideFile(w, 'target.txt'), 'tee-wrote'),
  },
  {
    name: 'sed -i rewrites a file outside the writable roots',
    command: (w) => `sed -i 's/original/sed-wrote/' ${outsideFile(w, 'sed.txt')}`,
    escaped: (w) => changed(outsideFile(w, 'sed.txt'), 'sed-wrote'),
  },
  {
    name: 'python3 writes outside the writable roots',
    command: (w) => `python3 -c "open('${outsideFile(w, 'py.txt')}','w').write('py-wrote')"`,
    escaped: (w) => changed(outsideFile(w, 'py.txt'), 'py-wrote'),
  },
  {
    name: 'node appends to ~/.bashrc',
    command: () => `node -e "require('fs').appendFileSync(process.env.HOME+'/.bashrc', 'node-wrote\\n')"`,
    escaped: (w) => changed(path.join(w.home, '.bashrc'), 'node-wrote'),
  },
  {
    name: 'dd writes outside the writable roots',
    command: (w) => `echo dd-wrote | dd of=${outsideFile(w, 'dd.txt')} status=none`,
    escaped: (w) => changed(outsideFile(w, 'dd.txt'), 'dd-wrote'),
  },
  {
    name: 'python3 writes a git hook inside the workspace',
    command: () => `python3 -c "open('.git/hooks/pre-commit','w').write('hook-wrote')"`,
    escaped: (w) => changed(path.join(w.workspace, '.git/hooks/pre-commit'), 'hook-wrote'),
  },
  {
    name: 'a redirection appends to .git/config inside the workspace',
    command: () => `printf '[core]\\n\\tfsmonitor = config-wrote\\n' >> .git/config`,
    escaped: (w) => changed(path.join(w.workspace, '.git/config'), 'config-wrote'),
  },
  {
    name: 'cat reads a hidden credential file',
    command: () => 'cat ~/.ssh/id_rsa',
    escaped: (w, output) => output.includes(w.secret),
  },
  {
    name: 'unmounting what hides the credentials, then reading them',
    command: () => 'umount ~/.ssh 2>/dev/null; umount -l ~/.ssh 2>/dev/null; cat ~/.ssh/id_rsa',
    escaped: (w, output) => output.includes(w.secret),
  },
  {
    name: 'sed -i rewrites the policy file (inside the workspace)',
    command: (w) => `sed -i 's/default: allow/default: deny # sed-wrote/' ${w.policyPath}`,
    escaped: (w) => changed(w.policyPath, 'sed-wrote'),
  },
  {
    name: 'the audit trail is read',
    command: (w) => `cat ${w.auditPath}`,
    escaped: (_w, output) => output.includes('server-start'),
  },
  // Last: when it works it breaks the trail, and the server then refuses everything.
  {
    name: 'a redirection appends to the audit trail',
    command: (w) => `echo '{"forged":"audit-wrote"}' >> ${w.auditPath}`,
    // The decision record quotes the command line; only a line that is the forged object is an append.
    escaped: (w) => readText(w.auditPath).split('\n').includes('{"forged":"audit-wrote"}'),
  },
];

describe.each([
  ['off', false],
  ['required', true],
] as const)('filesystem escapes, sandbox.mode: %s', (mode, confined) => {
  let world: SandboxWorld;
  let server: WireServer;

  beforeAll(() => {
    world = makeWorld({ sandbox: sandboxSection(mode), policyInWorkspace: true });
    server = serveIn(world);
  });

  afterAll(async () => {
    await server.dispose();
    world.dispose();
  });

  test('the workspace itself stays writable', async () => {
    const result = await run(
      server,
      'echo built > out.txt && mkdir -p dist && cp out.txt dist/ && cat dist/out.txt',
    );
    expect(result).toMatchObject({ ran: true, exitCode: 0 });
    expect(readFileSync(path.join(world.workspace, 'dist/out.txt'), 'utf8')).toBe('built\n');
  });

  test(`git commits inside the workspace ${confined ? 'fail: the git dir is read-only' : 'work'}`, async () => {
    const result = await run(
      server,
      'git -c user.name=t -c user.email=t@t add source.txt && git -c user.name=t -c user.email=t@t commit -qm one; echo "rc=$?"; git log --oneline 2>/dev/null | wc -l',
    );
    expect(result.output).toMatch(confined ? /rc=128\n0\n$/ : /rc=0\n1\n$/);
  });

  test(`an outside write ${confined ? 'fails with a read-only file system' : 'succeeds'}`, async () => {
    const target = path.join(world.outside, 'plain.txt');
    const result = await run(server, `echo x > ${target}`);
    if (confined) {
      expect(result.exitCode).not.toBe(0);
      expect(result.output).toMatch(/Read-only file system/);
    } else {
      expect(result.exitCode).toBe(0);
      appendFileSync(target, '');
    }
  });

  test.each(CASES.map((c) => [c.name, c] as const))(
    `${confined ? 'fails' : 'works'}: %s`,
    async (_name, c) => {
      const result = await run(server, c.command(world));
      expect(result.ran).toBe(true);
      expect(c.escaped(world, result.output)).toBe(!confined);
      if (confined) expect(result.output).not.toContain(world.secret);
    },
  );
});

describe('the five lines of the sandbox issue, under the shipped default policy', () => {
  let world: SandboxWorld;
  let server: WireServer;
  const policy = path.resolve(import.meta.dirname, '../../../../policies/default.yaml');

  beforeAll(() => {
    world = makeWorld({ sandbox: null });
    server = WireServer.start(['--policy', policy, '--audit', world.auditPath], {
      cwd: world.workspace,
      env: { ...process.env, HOME: world.home },
    });
  });

  afterAll(async () => {
    await server.dispose();
    world.dispose();
  });

  test.each([
    ['cp into .git/config', () => 'echo "[core] fsmonitor = x" > /tmp/x && cp /tmp/x .git/config'],
    ['python3 appends to .git/config', () => `python3 -c "open('.git/config','a').write('fsmonitor-x')"`],
    [
      'node appends to ~/.bashrc',
      () => `node -e "require('fs').appendFileSync(process.env.HOME+'/.bashrc', 'node-x')"`,
    ],
    ['echo appends to the audit trail', (w: SandboxWorld) => `echo '{}' >> ${w.auditPath}`],
    ['sed -i rewrites the policy file', () => `sed -i s/deny/allow/ ${policy}`],
  ])('%s fails in the kernel or is refused, and the trail says which', async (_name, line) => {
    const before = {
      config: readText(path.join(world.workspace, '.git/config')),
      bashrc: readText(path.join(world.home, '.bashrc')),
      policy: readText(policy),
    };
    const result = await run(server, line(world));
    expect(readText(path.join(world.workspace, '.git/config'))).toBe(before.config);
    expect(readText(path.join(world.home, '.bashrc'))).toBe(before.bashrc);
    expect(readText(policy)).toBe(before.policy);
    expect(readText(world.auditPath).split('\n')).not.toContain('{}');
    const records = auditRecords(world);
    const create = records
      .filter((r) => (r.event as { action: string }).action === 'terminal-create')
      .at(-1) as {
      termgate: { decision: string; sandbox?: { sha256: string } };
    };
    if (result.ran) {
      // Allowed by the rules, stopped by the kernel: the decision names the sandbox profile, the exit its failure.
      expect(result.exitCode).not.toBe(0);
      expect(create.termgate.decision).toBe('allow');
      expect(create.termgate.sandbox?.sha256).toMatch(/^[0-9a-f]{64}$/);
      const spawned = records
        .filter((r) => (r.event as { action: string }).action === 'terminal-spawn')
        .at(-1) as {
        termgate: { sandbox?: { sha256: string } };
      };
      expect(spawned.termgate.sandbox?.sha256).toBe(create.termgate.sandbox?.sha256);
      const exit = records
        .filter((r) => (r.event as { action: string }).action === 'terminal-exit')
        .at(-1) as {
        event: { outcome: string };
      };
      expect(exit.event.outcome).toBe('failure');
    } else {
      expect(create.termgate.decision).toBe('deny');
    }
  });
});

describe('the audit trail and the signing key stay out of reach', () => {
  let world: SandboxWorld;
  let server: WireServer;
  let key: string;
  let trail: string;

  beforeAll(() => {
    world = makeWorld({
      sandbox: ['  mode: required', '  filesystem:', '    privateTmp: false', '  network: none'].join('\n'),
    });
    key = path.join(world.root, 'audit.key');
    execFileSync(process.execPath, [SERVER_BIN, 'audit', 'keygen', key]);
    // A directory of its own, which rotation fills with segments while commands run.
    trail = path.join(world.root, 'trail', 'audit.jsonl');
    server = WireServer.start(
      [
        '--policy',
        world.policyPath,
        '--audit',
        trail,
        '--audit-signing-key',
        key,
        '--audit-rotate-size',
        '4096',
      ],
      { cwd: world.workspace, env: { ...process.env, HOME: world.home } },
    );
  });

  afterAll(async () => {
    await server.dispose();
    world.dispose();
  });

  test('the signing key cannot be read', async () => {
    const result = await run(server, `cat ${key}; echo "exit=$?"`);
    expect(readText(key)).toMatch(/PRIVATE KEY/);
    expect(result.output).not.toMatch(/PRIVATE KEY/);
  });

  test('a trail whose directory holds the workspace is refused at start: it could not be hidden', async () => {
    const refused = WireServer.start(
      ['--policy', world.policyPath, '--audit', path.join(world.root, 'audit.jsonl')],
      {
        cwd: world.workspace,
        env: { ...process.env, HOME: world.home },
      },
    );
    expect((await refused.untilExit()).code).toBe(1);
    expect(refused.stderr).toMatch(
      /the audit trail's directory .* holds the sandbox's writable directory .*ws/,
    );
  });

  test('neither the trail nor its rotated segments can be read or appended to', async () => {
    // Enough records to rotate at least once.
    for (let i = 0; i < 6; i++) await run(server, `echo ${'x'.repeat(400)}`);
    const segments = readdirSync(path.dirname(trail)).filter((n) => /^audit\..+\.jsonl$/.test(n));
    expect(segments.length).toBeGreaterThan(1);
    const paths = [trail, ...segments.map((n) => path.join(path.dirname(trail), n))];
    const result = await run(
      server,
      // Read every file, including segments created after this command's profile was computed.
      `sleep 0.5; cat ${path.dirname(trail)}/* 2>/dev/null | grep -c server-start; echo '{}' >> ${trail}`,
    );
    expect(result.output.split('\n')[0]).toBe('0');
    for (const file of paths) expect(readText(file).split('\n')).not.toContain('{}');
  });
});
