/**
 * Shipping that loses nothing (docs/AUDIT.md, "Shipping with RELP"): two real
 * rsyslog daemons from Debian (`rsyslog`, `rsyslog-relp`) on loopback. The
 * shipper runs examples/rsyslog/termgate-audit-relp.conf (imfile on the
 * trail's segments → omrelp, disk-assisted queue); the collector runs
 * examples/rsyslog/termgate-collector-relp.conf (imrelp → a file). Between
 * them a TCP relay in the test is the network path, which the test pauses
 * (the connection stays up, no byte passes) and takes away for a while (its
 * connections reset, its port refusing).
 *
 * Through two collector restarts, a paused path and a path that is gone (with
 * records written, and commands run by a real `termgate serve`, during
 * each), every record reaches the collector. RELP is at-least-once, so the
 * collector's copy is deduplicated by `seq` (a duplicate must be the same
 * bytes), and then `termgate audit verify` (the built CLI) must find it
 * intact, with as many records as the trail.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { listTrailDirectory } from '@termgate/audit';
import { lines, RSYSLOGD, Rsyslog, serve, writeRecords } from './support/rsyslog.js';
import { assertServerBuilt, REPO_ROOT, SERVER_BIN } from './support/wire-server.js';

const SHIPPER = path.join(REPO_ROOT, 'examples/rsyslog/termgate-audit-relp.conf');
const COLLECTOR = path.join(REPO_ROOT, 'examples/rsyslog/termgate-collector-relp.conf');
const RELP_MODULES = '/usr/lib/x86_64-linux-gnu/rsyslog';

/** A free loopback port (closed again: the daemon or the relay takes it). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * The network path: forwards each connection from `listenPort` to
 * `targetPort`.
 *
 * `pause()` is a path that stops carrying packets while both ends stay
 * connected: the relay keeps its connections open and holds every byte, in
 * both directions, instead of passing it on; `resume()` delivers what it
 * held, in order, and carries bytes again. Nothing is lost or reset, as with
 * TCP over a path that comes back before either end gave up; what the
 * collector sees is only delay. `heldFromShipper()` is what the shipper sent
 * into the paused path (the test waits until its records are there).
 *
 * `stop()` is a path that is gone: its connections are reset and its port
 * refuses until `start()`.
 */
class PausableRelay {
  private server: Server | null = null;
  private readonly pairs = new Set<[Socket, Socket]>();
  private paused = false;
  private held: Array<{ to: Socket; chunk: Buffer }> = [];

  constructor(
    private readonly listenPort: number,
    private readonly targetPort: number,
  ) {}

  async start(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.targetPort, '127.0.0.1');
      const pair: [Socket, Socket] = [client, upstream];
      this.pairs.add(pair);
      const drop = (): void => {
        this.pairs.delete(pair);
        client.destroy();
        upstream.destroy();
      };
      client.on('data', (chunk: Buffer) => this.forward(upstream, chunk));
      upstream.on('data', (chunk: Buffer) => this.forward(client, chunk));
      for (const socket of pair) {
        socket.on('error', drop);
        socket.on('close', drop);
      }
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(this.listenPort, '127.0.0.1', resolve));
  }

  private forward(to: Socket, chunk: Buffer): void {
    if (this.paused) this.held.push({ to, chunk });
    else to.write(chunk);
  }

  /** The connections that carry bytes now (or would, but for a pause). */
  get connections(): number {
    return this.pairs.size;
  }

  pause(): void {
    this.paused = true;
  }

  /** The bytes the shipper sent since the pause, not yet delivered to the collector. */
  heldFromShipper(): string {
    const upstreams = new Set([...this.pairs].map(([, upstream]) => upstream));
    return Buffer.concat(
      this.held.filter(({ to }) => upstreams.has(to)).map(({ chunk }) => chunk),
    ).toString();
  }

  resume(): void {
    this.paused = false;
    const held = this.held;
    this.held = [];
    for (const { to, chunk } of held) if (!to.destroyed) to.write(chunk);
  }

  async stop(): Promise<void> {
    this.paused = false;
    this.held = [];
    for (const [client, upstream] of this.pairs) {
      client.resetAndDestroy();
      upstream.destroy();
    }
    this.pairs.clear();
    const server = this.server;
    this.server = null;
    if (server !== null) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** The collector's lines, by seq; throws when two lines of one seq differ. */
function deduplicated(file: string): { unique: string[]; duplicates: number } {
  const bySeq = new Map<number, string>();
  let duplicates = 0;
  for (const line of lines(file)) {
    const seq = (JSON.parse(line) as { seq: number }).seq;
    const seen = bySeq.get(seq);
    if (seen !== undefined) {
      duplicates += 1;
      if (seen !== line) throw new Error(`seq ${seq} arrived twice with different bytes`);
    } else bySeq.set(seq, line);
  }
  const unique = [...bySeq.entries()].sort((a, b) => a[0] - b[0]).map(([, line]) => line);
  return { unique, duplicates };
}

async function until(
  what: string,
  check: () => boolean,
  daemons: readonly Rsyslog[],
  detail: () => string = () => '',
): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (!check()) {
    if (Date.now() > deadline) {
      throw new Error(
        `timed out waiting for ${what} (${detail()}); rsyslog said:\n${daemons.map((d, i) => `--- ${i === 0 ? 'shipper' : 'collector'}:\n${d.output.slice(-3000)}`).join('\n')}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('RELP shipping between two rsyslog daemons', () => {
  let dir: string;

  beforeAll(() => {
    // Never skipped: a machine without rsyslog or rsyslog-relp fails here (scripts/ensure-system-packages.mjs installs both).
    expect(existsSync(RSYSLOGD)).toBe(true);
    expect(existsSync(path.join(RELP_MODULES, 'omrelp.so'))).toBe(true);
    expect(existsSync(path.join(RELP_MODULES, 'imrelp.so'))).toBe(true);
    assertServerBuilt();
    dir = mkdtempSync(path.join(tmpdir(), 'termgate-relp-'));
  });
  afterAll(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  test('every record reaches the collector through two restarts, a paused and a lost network path; deduplicated by seq, the copy verifies', async () => {
    const trail = path.join(dir, 'trail');
    const file = path.join(trail, 'audit.jsonl');
    const collected = path.join(dir, 'collected', 'audit.jsonl');
    for (const sub of ['trail', 'ship-work', 'collect-work', 'collected']) mkdirSync(path.join(dir, sub));
    const collectorPort = await freePort();
    const relayPort = await freePort();

    const shipperConf = readFileSync(SHIPPER, 'utf8');
    const collectorConf = readFileSync(COLLECTOR, 'utf8');
    expect(shipperConf).toContain('target="collector.example" port="2514"');
    expect(collectorConf).toContain('address="127.0.0.1" port="2514"');
    const shipperPath = path.join(dir, 'shipper.conf');
    const collectorPath = path.join(dir, 'collector.conf');
    writeFileSync(
      shipperPath,
      `global(workDirectory="${path.join(dir, 'ship-work')}")\n${shipperConf
        .replaceAll('/var/log/termgate/', `${trail}/`)
        .replace('target="collector.example" port="2514"', `target="127.0.0.1" port="${relayPort}"`)}`,
    );
    writeFileSync(
      collectorPath,
      `global(workDirectory="${path.join(dir, 'collect-work')}")\n${collectorConf
        .replace('port="2514"', `port="${collectorPort}"`)
        .replace('/var/log/termgate-collected/audit.jsonl', collected)}`,
    );
    mkdirSync(path.join(dir, 'shipper'));
    mkdirSync(path.join(dir, 'collector'));
    const shipper = new Rsyslog(shipperPath, path.join(dir, 'shipper'));
    const collector = new Rsyslog(collectorPath, path.join(dir, 'collector'));
    const relay = new PausableRelay(relayPort, collectorPort);
    const daemons = [shipper, collector];
    const trailRecords = (): string[] => listTrailDirectory(trail).flatMap(lines);
    const arrivedAll = (): boolean => deduplicated(collected).unique.length >= trailRecords().length;
    const counts = (): string =>
      `collector ${deduplicated(collected).unique.length} unique of ${lines(collected).length}, trail ${trailRecords().length}`;

    try {
      collector.start();
      await relay.start();
      shipper.start();
      await writeRecords(file, 10, 'first', 'first');
      await until('the first records', arrivedAll, daemons, counts);

      // The collector restarts; meanwhile termgate writes, and runs commands as usual.
      await collector.stop();
      await writeRecords(file, 10, 'collector-down');
      expect(await serve(file, ['echo collector-down', 'exit 4'])).toEqual([0, 4]);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      collector.start();
      await until('the records written while the collector was down', arrivedAll, daemons, counts);

      // The network path pauses: the connection stays up, no byte passes either way. termgate
      // writes and runs commands meanwhile; the shipper sends them into the path, the collector
      // gets none of them; then the path carries again.
      const beforePause = trailRecords().length;
      expect(deduplicated(collected).unique).toHaveLength(beforePause);
      expect(relay.connections).toBeGreaterThan(0);
      relay.pause();
      await writeRecords(file, 10, 'path-paused', 'first');
      expect(await serve(file, ['echo path-paused', 'exit 5'])).toEqual([0, 5]);
      const pausedRecords = trailRecords().slice(beforePause);
      expect(pausedRecords.length).toBeGreaterThanOrEqual(14);
      const lastHash = (JSON.parse(pausedRecords.at(-1)!) as { hash: string }).hash;
      await until(
        'the shipper to send the records written during the pause into the paused path',
        () => relay.heldFromShipper().includes(lastHash),
        daemons,
        counts,
      );
      for (const record of pausedRecords) {
        expect(relay.heldFromShipper()).toContain((JSON.parse(record) as { hash: string }).hash);
      }
      expect(deduplicated(collected).unique).toHaveLength(beforePause);
      relay.resume();
      await until('the records written while the path was paused', arrivedAll, daemons, counts);

      // The network path goes away: its connections reset, the port refuses, for a while.
      await relay.stop();
      await writeRecords(file, 10, 'path-down', 'first');
      expect(await serve(file, ['echo path-down'])).toEqual([0]);
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      await relay.start();
      await until('the records written while the path was down', arrivedAll, daemons, counts);

      // The collector restarts a second time, now right after a burst it has not all stored yet.
      await writeRecords(file, 10, 'before-second-restart');
      await collector.stop();
      await writeRecords(file, 10, 'collector-down-again', 'first');
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      collector.start();
      await until('the records written around the second restart', arrivedAll, daemons, counts);
      await writeRecords(file, 5, 'last');
      await until('the last records', arrivedAll, daemons, counts);
    } finally {
      await shipper.stop();
      await collector.stop();
      await relay.stop();
    }

    const expected = trailRecords();
    const { unique } = deduplicated(collected);
    expect(unique).toHaveLength(expected.length);
    expect(unique).toEqual(expected);
    const copy = path.join(dir, 'collector-copy.jsonl');
    writeFileSync(copy, unique.map((line) => `${line}\n`).join(''));
    const verify = spawnSync(process.execPath, [SERVER_BIN, 'audit', 'verify', copy], { encoding: 'utf8' });
    expect(verify.stderr).toBe('');
    expect(verify.status).toBe(0);
    expect(verify.stdout).toMatch(new RegExp(`intact, ${expected.length} records`));
  }, 300_000);
});
