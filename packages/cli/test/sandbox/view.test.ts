/**
 * The allowlisted view and the host's Unix sockets (issue 18, items 2 and
 * 3), attacked as root and as an unprivileged user, each case once with
 * the sandbox off (the gap: the attack works) and once on, and checked on
 * the host's side: the credential's bytes never reach the output, the
 * daemon still holds what it held, the agent's key never listed.
 *
 * The policy under test makes the whole of `~/.cache` writable, the
 * tempting mistake: the git credential-cache daemon's socket then lies
 * inside a writable directory, and only the socket table (every listening
 * host socket not allowed by path is covered) keeps it out of reach.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { WireServer } from '../e2e/support/wire-server.js';
import { hostRun, IDENTITIES, type Identity, openWorld, serveAs } from './support/identity.js';
import { makeWorld, run, type SandboxWorld } from './support/sandbox-fixture.js';

/** Credential files no deny list of the policy names: the view hides them because nothing makes them readable. */
const CREDENTIAL_FILES = [
  '.config/git/credentials',
  '.cargo/credentials.toml',
  '.gem/credentials',
  '.yarnrc.yml',
  '.config/glab-cli/config.yml',
  '.docker/key.pem',
  '.config/containers/auth.json',
  '.terraform.d/credentials.tfrc.json',
  '.vault-token',
  '.pgpass',
  '.claude/.credentials.json',
  '.codex/auth.json',
  '.bash_history',
  '.m2/settings.xml',
];

interface Daemons {
  readonly token: string;
  readonly fingerprint: string;
  readonly deniedAgent: string;
  readonly allowedAgent: string;
  stop(): void;
}

function plantCredentials(world: SandboxWorld): void {
  for (const file of CREDENTIAL_FILES) {
    const full = path.join(world.home, file);
    mkdirSync(path.dirname(full), { recursive: true });
    writeFileSync(full, `${world.secret} ${file}\n`);
  }
  writeFileSync(path.join(world.home, '.gitconfig'), '[user]\n\tname = shown-through-the-view\n');
}

/** A git credential-cache daemon holding a token, and two ssh-agents holding one key, all of `identity`. */
function startDaemons(world: SandboxWorld, identity: Identity): Daemons {
  const env = { HOME: world.home, XDG_CACHE_HOME: '', XDG_CONFIG_HOME: '' };
  const token = `token-${world.secret}`;
  const approve = hostRun(identity, ['git', '-c', 'credential.helper=cache', 'credential', 'approve'], {
    env,
    input: `protocol=https\nhost=github.com\nusername=u\npassword=${token}\n\n`,
  });
  if (approve.status !== 0) throw new Error(`git credential approve: ${approve.stderr}`);
  const agents: number[] = [];
  const agent = (name: string): string => {
    const sock = path.join(world.outside, name);
    const out = hostRun(identity, ['ssh-agent', '-a', sock]);
    const pid = /SSH_AGENT_PID=(\d+)/.exec(out.stdout)?.[1];
    if (pid === undefined) throw new Error(`ssh-agent did not start: ${out.stderr}`);
    agents.push(Number(pid));
    return sock;
  };
  const deniedAgent = agent('agent.sock');
  const allowedAgent = agent('allowed-agent.sock');
  const key = path.join(world.outside, `key-${identity}`);
  const keygen = hostRun(identity, ['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-f', key]);
  if (keygen.status !== 0) throw new Error(`ssh-keygen: ${keygen.stderr}`);
  for (const sock of [deniedAgent, allowedAgent]) {
    const added = hostRun(identity, ['ssh-add', key], { env: { SSH_AUTH_SOCK: sock } });
    if (added.status !== 0) throw new Error(`ssh-add: ${added.stderr}`);
  }
  const fingerprint = /SHA256:\S+/.exec(
    execFileSync('ssh-keygen', ['-lf', `${key}.pub`], { encoding: 'utf8' }),
  )![0];
  return {
    token,
    fingerprint,
    deniedAgent,
    allowedAgent,
    stop: () => {
      hostRun(identity, ['git', 'credential-cache', 'exit'], { env });
      for (const pid of agents) {
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          // Already gone.
        }
      }
    },
  };
}

/** What the host's daemon hands out for github.com, asked on the host. */
function hostCredential(world: SandboxWorld, identity: Identity): string {
  return hostRun(identity, ['git', 'credential-cache', 'get'], {
    env: { HOME: world.home, XDG_CACHE_HOME: '' },
    input: 'protocol=https\nhost=github.com\n\n',
  }).stdout;
}

describe.each(
  IDENTITIES.flatMap((identity) => (['off', 'required'] as const).map((mode) => [identity, mode] as const)),
)('the allowlisted view, served as %s, sandbox.mode: %s', (identity, mode) => {
  const confined = mode === 'required';
  let world: SandboxWorld;
  let server: WireServer;
  let daemons: Daemons;

  beforeAll(() => {
    world = makeWorld({ sandbox: null });
    plantCredentials(world);
    if (identity === 'unprivileged') openWorld(world);
    daemons = startDaemons(world, identity);
    writeFileSync(
      world.policyPath,
      [
        'default: allow',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a policy placeholder, not a template
        "cwd: { roots: ['${SERVER_CWD}'] }",
        'sandbox:',
        `  mode: ${mode}`,
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a policy placeholder, not a template
        "  filesystem: { writable: ['${SERVER_CWD}', '~/.cache'] }",
        `  unixSockets: { allow: ['${daemons.allowedAgent}'] }`,
        '  network: none',
        '',
      ].join('\n'),
    );
    server = serveAs(world, identity, { XDG_CACHE_HOME: '' });
  }, 60_000);
  afterAll(async () => {
    await server?.dispose();
    daemons?.stop();
    world?.dispose();
  });

  test(`credential files in HOME that no deny list names ${confined ? 'are not there' : 'are read'}`, async () => {
    const result = await run(server, CREDENTIAL_FILES.map((f) => `cat ~/${f} 2>&1;`).join(' '));
    expect(result.ran).toBe(true);
    for (const file of CREDENTIAL_FILES) {
      expect(result.output.includes(`${world.secret} ${file}`)).toBe(!confined);
    }
  }, 60_000);

  test('what the policy makes readable is shown: git config reads', async () => {
    const result = await run(server, 'git config --global user.name; ls -A ~');
    expect(result.output).toContain('shown-through-the-view');
    if (confined) expect(result.output.split('\n').slice(1, -1).sort()).toEqual(['.cache', '.gitconfig']);
  }, 60_000);

  test(`the git credential-cache daemon's socket in a writable ~/.cache ${confined ? 'does not answer' : 'answers'}`, async () => {
    const result = await run(
      server,
      "printf 'protocol=https\\nhost=github.com\\n\\n' | git credential-cache get; echo done",
    );
    expect(result.output).toContain('done');
    expect(result.output.includes(daemons.token)).toBe(!confined);
    // On the host the daemon still holds the token: the refusal was the sandbox's, not a dead daemon.
    expect(hostCredential(world, identity)).toContain(daemons.token);
  }, 60_000);

  test(`an ssh-agent outside ~/.ssh ${confined ? 'is unreachable' : 'lists its key'}; the one allowed by path answers`, async () => {
    const denied = await run(server, `SSH_AUTH_SOCK=${daemons.deniedAgent} ssh-add -l; echo rc=$?`);
    expect(denied.output.includes(daemons.fingerprint)).toBe(!confined);
    if (confined) expect(denied.output).toMatch(/rc=2/);
    const allowed = await run(server, `SSH_AUTH_SOCK=${daemons.allowedAgent} ssh-add -l; echo rc=$?`);
    if (confined && identity === 'root') {
      // Served as root, commands run as termgate-sandbox: the socket is reachable (bound in, ACL rw),
      // but ssh-agent answers only its own uid or root (SO_PEERCRED), so root's agent refuses it.
      expect(allowed.output).not.toContain(daemons.fingerprint);
      expect(allowed.output).not.toMatch(/No such file|Permission denied/);
    } else {
      expect(allowed.output).toContain(daemons.fingerprint);
    }
  }, 60_000);

  test('root-only system files and /root, /run are hidden', async () => {
    const result = await run(server, 'cat /etc/shadow 2>&1; echo ---; ls -A /root /run 2>&1');
    const shadow = result.output.split('---')[0]!;
    // Only root can read /etc/shadow on the host; inside, nobody can.
    expect(/^root:/m.test(shadow)).toBe(!confined && identity === 'root');
    if (confined) {
      expect(result.output).toMatch(/\/root:\n\n\/run:\n/);
    }
  }, 60_000);

  test('sockets a command creates inside keep working: a server in /tmp and in the workspace, multiprocessing', async () => {
    const script = [
      'import socket, multiprocessing',
      'import sys',
      "for p in [sys.argv[1], 'own.sock']:",
      '    s = socket.socket(socket.AF_UNIX); s.bind(p); s.listen()',
      '    c = socket.socket(socket.AF_UNIX); c.connect(p); print("own-ok", p)',
      "if __name__ == '__main__':",
      '    with multiprocessing.Pool(2) as pool: print("pool", pool.map(abs, [-1, -2]))',
    ].join('\n');
    writeFileSync(path.join(world.workspace, 'own.py'), script);
    // Its own name: with the sandbox off, /tmp is the host's, shared with the other runs.
    const tmpSock = `/tmp/own-${identity}-${world.secret}.sock`;
    const result = await run(server, `rm -f own.sock; python3 own.py ${tmpSock}; rm -f ${tmpSock}`);
    expect(result.output).toContain(`own-ok ${tmpSock}`);
    expect(result.output).toContain('own-ok own.sock');
    expect(result.output).toContain('pool [1, 2]');
  }, 60_000);
});

// Not a test of termgate: the precondition that the attacks above use real daemons on this host.
test('the host has the daemons this suite starts', () => {
  for (const tool of ['ssh-agent', 'ssh-add', 'ssh-keygen', 'git']) {
    expect(spawnSync(tool, ['-h'], { encoding: 'utf8' }).error).toBeUndefined();
  }
});
