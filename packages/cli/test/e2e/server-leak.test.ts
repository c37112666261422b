/**
 * The built server over many terminal lifecycles: file descriptors and child
 * processes come back to their baseline (the judge worker is the one child
 * that stays). Counts, not timings.
 */
import { readdirSync, readFileSync } from 'node:fs';
import {
  assertServerBuilt,
  auditArgs,
  modern,
  removeAuditFiles,
  structuredResult,
  WireServer,
} from './support/wire-server.js';

function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return Number(fields[1]) === pid && fields[0] !== 'Z';
      } catch {
        return false;
      }
    })
    .map(Number);
}

function openFds(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

let server: WireServer;

beforeAll(() => {
  assertServerBuilt();
  server = WireServer.start(auditArgs());
});

afterAll(async () => {
  await server.dispose();
  removeAuditFiles();
});

async function cycles(count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    // Alternate argv and command-line forms, with and without output.
    const args = i % 2 === 0 ? { command: 'true', args: [] } : { command: 'echo hi | cat' };
    const created = await server.request('tools/call', modern({ name: 'terminal_create', arguments: args }));
    const { terminalId } = structuredResult(created) as { terminalId: string };
    await server.request('tools/call', modern({ name: 'terminal_wait_for_exit', arguments: { terminalId } }));
    await server.request('tools/call', modern({ name: 'terminal_output', arguments: { terminalId } }));
    await server.request('tools/call', modern({ name: 'terminal_release', arguments: { terminalId } }));
  }
}

test('300 create/wait/output/release cycles leave open fds and child processes at their baseline', async () => {
  await cycles(20);
  const fds = openFds(server.pid);
  const children = childrenOf(server.pid);
  expect(children).toHaveLength(0); // the policy judge is a worker thread, not a child process
  await cycles(300);
  expect(openFds(server.pid)).toBe(fds);
  expect(childrenOf(server.pid)).toEqual(children);
  // 320 spawns, each in its own cgroup and (as root) through setpriv, on a shared 2-core machine: not a timing check.
}, 120_000);
