/**
 * The escape suite, network half. A service on the host's loopback stands
 * for everything a command should not reach; the same lines run under
 * `network: none`, under an allowlist (through the proxy), and with the
 * sandbox off, and the answers show the difference.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WireServer } from '../e2e/support/wire-server.js';
import {
  auditRecords,
  call,
  makeWorld,
  run,
  type SandboxWorld,
  serveIn,
  start,
} from './support/sandbox-fixture.js';

const section = (mode: 'required' | 'off', network: string): string =>
  [`  mode: ${mode}`, '  filesystem:', '    privateTmp: false', `  network: ${network}`].join('\n');

let hostService: Server;
let port: number;

beforeAll(async () => {
  hostService = createServer((_req, res) => res.end('host-service-answer\n'));
  await new Promise<void>((resolve) => hostService.listen(0, '0.0.0.0', resolve));
  port = (hostService.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise((resolve) => hostService.close(resolve));
});

function world(mode: 'required' | 'off', network: string): { world: SandboxWorld; server: WireServer } {
  const w = makeWorld({ sandbox: section(mode, network) });
  return { world: w, server: serveIn(w) };
}

const curl = (url: string, extra = ''): string => `curl -sS -m 5 ${extra} ${url} 2>&1; echo "curl-exit=$?"`;
const nodeFetch = (url: string): string =>
  `node -e "fetch('${url}').then(r => r.text()).then(t => console.log(t), e => console.log('fetch-failed', e.cause ? e.cause.code : e.message))"`;
const python = (source: string): string => `python3 - <<'PY' 2>&1\n${source}\nPY`;
const rawSocket = (host: string, to: number): string =>
  `python3 -c "import socket; socket.create_connection(('${host}', ${to}), 3); print('socket-connected')" 2>&1 | tail -1`;

describe.each([
  ['off', false],
  ['required', true],
] as const)('network: none, sandbox.mode: %s', (mode, confined) => {
  let w: SandboxWorld;
  let server: WireServer;

  beforeAll(() => {
    ({ world: w, server } = world(mode, 'none'));
  });
  afterAll(async () => {
    await server.dispose();
    w.dispose();
  });

  test(`curl to a host loopback service ${confined ? 'is refused' : 'works'}`, async () => {
    const result = await run(server, curl(`http://127.0.0.1:${port}/`));
    expect(result.output.includes('host-service-answer')).toBe(!confined);
  });

  test(`node fetch to a host loopback service ${confined ? 'is refused' : 'works'}`, async () => {
    const result = await run(server, nodeFetch(`http://127.0.0.1:${port}/`));
    expect(result.output.includes('host-service-answer')).toBe(!confined);
    if (confined) expect(result.output).toMatch(/fetch-failed/);
  });
});

describe('network allowlist (sandbox.mode: required)', () => {
  let w: SandboxWorld;
  let server: WireServer;

  beforeAll(() => {
    ({ world: w, server } = world('required', "{ allow: ['127.0.0.2', '*.allowed.test'] }"));
  });
  afterAll(async () => {
    await server.dispose();
    w.dispose();
  });

  test('an allowed name is reached through the proxy', async () => {
    const result = await run(server, curl(`http://127.0.0.2:${port}/`));
    expect(result.output).toContain('host-service-answer');
  });

  test('an allowed name is reached through a CONNECT tunnel (as HTTPS clients do)', async () => {
    const result = await run(server, curl(`http://127.0.0.2:${port}/`, '--proxytunnel'));
    expect(result.output).toContain('host-service-answer');
  });

  test('a name outside the list is refused at the proxy and recorded in the audit trail', async () => {
    const result = await run(
      server,
      curl(`http://127.0.0.3:${port}/`, '-o /dev/null -w "status=%{http_code} "'),
    );
    expect(result.output).toContain('status=403');
    expect(result.output).not.toContain('host-service-answer');
    const tunnel = await run(server, curl(`http://127.0.0.3:${port}/`, '--proxytunnel'));
    expect(tunnel.output).not.toContain('host-service-answer');
    const refusals = auditRecords(w).filter(
      (r) => (r.event as { action?: string }).action === 'network-refused',
    );
    expect(refusals.map((r) => r.destination)).toEqual([
      { domain: '127.0.0.3', port },
      { domain: '127.0.0.3', port },
    ]);
    expect(refusals.map((r) => (r.http as { request: { method: string } }).request.method)).toEqual([
      'GET',
      'CONNECT',
    ]);
  });

  test("clients that read the proxy URL's credential reach an allowed name: Python urllib, plain and tunnelled", async () => {
    const url = `http://127.0.0.2:${port}/`;
    const plain = await run(
      server,
      `python3 -c "import urllib.request; print(urllib.request.urlopen('${url}', timeout=10).read().decode())" 2>&1`,
    );
    expect(plain.output).toContain('host-service-answer');
    // http.client's tunnel, as urllib uses it for https: the credential goes in the CONNECT.
    const tunnelled = await run(
      server,
      python(`import base64, http.client, os, urllib.parse
u = urllib.parse.urlsplit(os.environ['HTTPS_PROXY'])
c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
c.set_tunnel('127.0.0.2', ${port}, {'Proxy-Authorization': 'Basic ' + base64.b64encode(('%s:%s' % (u.username, u.password)).encode()).decode()})
c.request('GET', '/')
print(c.getresponse().read().decode())`),
    );
    expect(tunnelled.output).toContain('host-service-answer');
  });

  test('every proxy record, allowed and refused, names the terminal that made the request', async () => {
    const reached = await run(server, curl(`http://127.0.0.2:${port}/named`));
    expect(reached.output).toContain('host-service-answer');
    const refusedRun = await run(server, curl(`http://127.0.0.4:${port}/`, '--proxytunnel'));
    expect(refusedRun.output).not.toContain('host-service-answer');
    const records = auditRecords(w);
    const named = (action: string, terminalId: string | null): Record<string, unknown>[] =>
      records.filter(
        (r) =>
          (r.event as { action?: string }).action === action &&
          (r.termgate as { terminal_id?: string } | undefined)?.terminal_id === terminalId,
      );
    expect(named('network-allowed', reached.terminalId).map((r) => r.destination)).toEqual([
      { domain: '127.0.0.2', port },
    ]);
    expect(named('network-refused', refusedRun.terminalId).map((r) => r.destination)).toEqual([
      { domain: '127.0.0.4', port },
    ]);
    // No proxy record goes without a terminal but the ones refused for their credential.
    const anonymous = records.filter(
      (r) =>
        /^network-/.test((r.event as { action?: string }).action ?? '') &&
        (r.termgate as { terminal_id?: string } | undefined)?.terminal_id === undefined,
    );
    expect(anonymous.every((r) => (r.rule as { id: string[] }).id[0] === 'sandbox.network.credential')).toBe(
      true,
    );
  });

  test("another terminal's proxy credential is out of reach, and a missing or forged one is refused and recorded", async () => {
    const other = await start(server, 'echo "$HTTPS_PROXY" > /dev/null; sleep 30');
    // Every environ this terminal can see: only its own pid namespace's, none naming the other terminal.
    const look = await run(
      server,
      `cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c '${other}' ; ls /proc | grep -c '^[0-9]' ; echo looked`,
    );
    expect(look.output).toMatch(/^0\n\d+\nlooked/);
    const before = auditRecords(w).length;
    const forged = await run(
      server,
      `curl -sS -m 5 -o /dev/null -w "status=%{http_code} " -x http://${other}:forged@127.0.0.1:3128 http://127.0.0.2:${port}/; ` +
        `curl -sS -m 5 -o /dev/null -w "status=%{http_code} " -x http://127.0.0.1:3128 http://127.0.0.2:${port}/; echo done`,
    );
    expect(forged.output).toContain('status=407 status=407 done');
    const refusals = auditRecords(w)
      .slice(before)
      .filter((r) => (r.event as { action?: string }).action === 'network-refused');
    expect(refusals.length).toBeGreaterThanOrEqual(1);
    for (const record of refusals) {
      expect(record.rule).toEqual({ id: ['sandbox.network.credential'] });
      expect((record.termgate as { terminal_id?: string } | undefined)?.terminal_id).toBeUndefined();
    }
    expect(
      auditRecords(w)
        .slice(before)
        .filter((r) => (r.event as { action?: string }).action === 'network-allowed'),
    ).toEqual([]);
    await call(server, 'terminal_kill', { terminalId: other });
  });

  test('bypassing the proxy variables reaches nothing', async () => {
    const noproxy = await run(server, curl(`http://127.0.0.2:${port}/`, "--noproxy '*'"));
    expect(noproxy.output).not.toContain('host-service-answer');
    const socket = await run(server, rawSocket('127.0.0.2', port));
    expect(socket.output).not.toContain('socket-connected');
    const fetched = await run(server, nodeFetch(`http://127.0.0.2:${port}/`));
    expect(fetched.output).not.toContain('host-service-answer');
  });
});

describe.each([
  ['none', 'none'],
  ['an allowlist', "{ allow: ['127.0.0.2'] }"],
])('loopback between terminals of one server, network: %s', (_name, network) => {
  let w: SandboxWorld;
  let server: WireServer;

  beforeAll(() => {
    ({ world: w, server } = world('required', network));
  });
  afterAll(async () => {
    await server.dispose();
    w.dispose();
  });

  test('a server started in one terminal answers a client in another, and not the host', async () => {
    const devPort = await freePort();
    const devServer = await start(server, `python3 -m http.server ${devPort} --bind 127.0.0.1`);
    const probe = await run(
      server,
      `for i in $(seq 100); do curl -sf -m 2 http://localhost:${devPort}/ >/dev/null && echo reached && exit 0; sleep 0.1; done; echo unreachable`,
    );
    expect(probe.output).toContain('reached');
    const fromHost = await fetch(`http://127.0.0.1:${devPort}/`).then(
      () => 'reached',
      () => 'refused',
    );
    expect(fromHost).toBe('refused');
    await call(server, 'terminal_release', { terminalId: devServer });
  });
});

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port: free } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return free;
}
