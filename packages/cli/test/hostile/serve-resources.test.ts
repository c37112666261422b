/**
 * The built server (`termgate serve`) under a launcher that leaks
 * descriptors and a client that stops reading.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Readable } from 'node:stream';
import {
  auditArgs,
  defaultPolicyArgs,
  modern,
  pause,
  REPO_ROOT,
  removeAuditFiles,
  SERVER_BIN,
  structuredResult,
  unsandboxedDefaultPolicy,
  WireServer,
} from '../e2e/support/wire-server.js';
import { peakRss, spawnedPids } from './support/proc.js';

afterAll(removeAuditFiles);

describe('serve: commands start with only stdin, stdout and stderr', () => {
  test('a writable pipe the launcher left at fd 251 is not open in commands', async () => {
    const audit = auditArgs();
    // stdio[251] is a pipe the server inherits without close-on-exec.
    const stdio = ['pipe', 'pipe', 'pipe', ...Array(248).fill('ignore'), 'pipe'] as const;
    const child = spawn(
      process.execPath,
      [SERVER_BIN, 'serve', ...audit, ...defaultPolicyArgs(false), '--log-level', 'silent'],
      {
        cwd: REPO_ROOT,
        stdio: [...stdio],
      },
    );
    const leaked = (child.stdio as unknown as Readable[])[251]!;
    let stolen = '';
    leaked.on('data', (chunk) => {
      stolen += chunk;
    });
    let out = '';
    child.stdout!.on('data', (chunk) => {
      out += chunk;
    });
    const answer = async (id: number) => {
      for (;;) {
        const line = out.split('\n').find((l) => l.startsWith(`{"id":${id},`));
        if (line !== undefined) return JSON.parse(line);
        await pause(20);
      }
    };
    const call = (id: number, name: string, args: Record<string, unknown>) =>
      child.stdin!.write(
        `${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: modern({ name, arguments: args }) })}\n`,
      );
    try {
      call(1, 'terminal_create', { command: 'echo pwned >&251; echo "rc=$?"; ls /proc/$$/fd; sleep 1000' });
      const { terminalId } = structuredResult(await answer(1));
      let output = '';
      for (let id = 2; !output.includes('rc='); id++) {
        call(id, 'terminal_output', { terminalId });
        output = structuredResult(await answer(id)).output as string;
        await pause(20);
      }
      expect(output).toMatch(/Bad file descriptor/);
      expect(output).toContain('rc=1');
      const [pid] = spawnedPids(audit[1]!);
      // The shell's own descriptors, seen from outside: exactly 0, 1 and 2.
      expect(readdirSync(`/proc/${pid}/fd`).sort()).toEqual(['0', '1', '2']);
      expect(stolen).toBe('');
    } finally {
      child.stdin!.end();
      await new Promise((resolve) => child.once('exit', resolve));
    }
  });
});

describe('serve: a client that stops reading', () => {
  test('keeps the server memory bounded, loses nothing, and is served again when it reads', async () => {
    // Answers of a full 1 MiB each: the policy's ceiling on a result's characters is raised to allow them.
    const policy = path.join(mkdtempSync(path.join(tmpdir(), 'termgate-paused-')), 'policy.yaml');
    writeFileSync(
      policy,
      readFileSync(unsandboxedDefaultPolicy(), 'utf8').replace(
        /^limits:\n/m,
        'limits:\n  maxOutputChars: 1100000\n',
      ),
    );
    const server = WireServer.start(['--log-level', 'silent', '--policy', policy]);
    try {
      const created = await server.request(
        'tools/call',
        modern({ name: 'terminal_create', arguments: { command: 'head -c 1048576 /dev/zero | tr "\\0" x' } }),
      );
      const { terminalId } = structuredResult(created);
      await server.request(
        'tools/call',
        modern({ name: 'terminal_wait_for_exit', arguments: { terminalId } }),
      );
      const before = peakRss(server.pid);
      server.child.stdout.pause();
      const ids: number[] = [];
      const flood = async (count: number): Promise<number> => {
        for (let i = 0; i < count; i++) {
          const id = server.id();
          ids.push(id);
          server.send({
            jsonrpc: '2.0',
            id,
            method: 'tools/call',
            params: modern({ name: 'terminal_output', arguments: { terminalId, maxOutputChars: 1100000 } }),
          });
        }
        // Let the server do all it will do while nobody reads (a pause for polling, not an assertion).
        let last = 0;
        for (let i = 0; i < 20; i++) {
          await pause(250);
          const now = peakRss(server.pid);
          if (now === last && i > 4) break;
          last = now;
        }
        return peakRss(server.pid);
      };
      const first = await flood(300);
      const second = await flood(300);
      // Unbounded, 300 answers of 1 MiB each took the server past 1.4 GB, and 300 more would add as
      // much. Bounded, the peak does not grow with the answers that wait: the second 300 add
      // (nearly) nothing. The first costs what the answers being built take at once: under 200 MB
      // on Node 20, 350-400 MB on Node 24 (whose heap grows further before it collects).
      expect(second - first).toBeLessThan(64 * 1024 * 1024);
      expect(first - before).toBeLessThan(512 * 1024 * 1024);
      server.child.stdout.resume();
      for (const id of ids) {
        const answer = await server.waitFor((m) => m.id === id && 'result' in m, `answer ${id}`, {
          timeoutMs: 60_000,
        });
        expect((structuredResult(answer).output as string).length).toBe(1048576);
      }
    } finally {
      await server.dispose();
    }
  }, 120_000);
});
