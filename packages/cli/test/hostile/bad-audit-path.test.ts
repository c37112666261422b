/**
 * `termgate serve --audit PATH` with a PATH that cannot hold a trail: a
 * clear error and exit code 1 at once, whether stdin is still open or was
 * closed before the gate started, and an exit on SIGTERM in every state.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import * as path from 'node:path';
import { defaultPolicyArgs, REPO_ROOT, SERVER_BIN } from '../e2e/support/wire-server.js';

// Generous: the machine is shared; the old failure was a spin that never ended.
const EXIT_MS = 30_000;

let scratch: string;
beforeAll(() => {
  // Outside /tmp, like every hostile test's scratch.
  scratch = mkdtempSync('/var/tmp/termgate-bad-audit-');
  mkdirSync(path.join(scratch, 'a-directory'));
  symlinkSync(path.join(scratch, 'missing', 'trail.jsonl'), path.join(scratch, 'dangling'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Outcome {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
}

function serve(audit: string, wrap: readonly string[] = [], sandboxed = false): ChildProcess {
  const argv = [process.execPath, SERVER_BIN, 'serve', '--audit', audit, ...defaultPolicyArgs(sandboxed)];
  const [command, ...args] = [...wrap, ...argv];
  return spawn(command!, args, { cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
}

function outcome(child: ChildProcess, timeoutMs = EXIT_MS): Promise<Outcome> {
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  child.stdout!.resume();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stderr });
    });
  });
}

const longPath = `/var/tmp/${'x'.repeat(300)}/trail.jsonl`;
const deepPath = `/var/tmp/${Array(300).fill('abcdefghijklmnop').join('/')}/trail.jsonl`;

const cases: ReadonlyArray<readonly [string, () => string, RegExp]> = [
  ['under /proc', () => '/proc/termgate-nope/audit.jsonl', /\/proc\/termgate-nope/],
  ['under /sys', () => '/sys/termgate-nope/audit.jsonl', /\/sys\/termgate-nope/],
  ['a file /proc will not create', () => '/proc/self/termgate.jsonl', /\/proc\/self\/termgate\.jsonl/],
  ['naming a directory', () => path.join(scratch, 'a-directory'), /is a directory/],
  ['through a dangling symlink', () => path.join(scratch, 'dangling'), /dangling symlink/],
  ['with a name too long', () => longPath, /ENAMETOOLONG/],
  ['longer than PATH_MAX', () => deepPath, /ENAMETOOLONG/],
];

describe('serve --audit with a path that cannot hold a trail', () => {
  test.each(cases.filter(([name]) => /proc|directory|dangling/.test(name)))(
    '%s: exit 1 with the reason, stdin open',
    async (_name, audit, reason) => {
      const child = serve(audit());
      const result = await outcome(child);
      child.stdin!.end();
      expect(result).toMatchObject({ code: 1, signal: null });
      expect(result.stderr).toMatch(/refusing to start: cannot open audit file/);
      expect(result.stderr).toMatch(reason);
    },
    EXIT_MS + 10_000,
  );

  // The shipped (sandboxed) policy also keeps its start-up check cache beside the trail: its
  // directory was made by Node 20's recursive mkdir, which never returns under /proc (it hung).
  test.each(cases.filter(([name]) => /proc|sys/.test(name)))(
    '%s, under the shipped sandboxed policy: exit 1 with the reason, stdin open and closed',
    async (_name, audit, reason) => {
      for (const closeFirst of [false, true]) {
        const child = serve(audit(), [], true);
        if (closeFirst) child.stdin!.end();
        const result = await outcome(child);
        child.stdin!.end();
        expect(result).toMatchObject({ code: 1, signal: null });
        expect(result.stderr).toMatch(/refusing to start: cannot open audit file/);
        expect(result.stderr).toMatch(reason);
      }
    },
    2 * EXIT_MS + 10_000,
  );

  test.each(cases)(
    '%s: exit 1 with the reason, stdin closed before the gate started',
    async (_name, audit, reason) => {
      const child = serve(audit());
      child.stdin!.end();
      const result = await outcome(child);
      expect(result).toMatchObject({ code: 1, signal: null });
      expect(result.stderr).toMatch(reason);
    },
    EXIT_MS + 10_000,
  );

  test(
    'on a read-only file system: exit 1 naming EROFS',
    async () => {
      // bubblewrap makes every mount read-only for the server itself: a real EROFS, as root too.
      const bwrap = ['bwrap', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--'];
      const child = serve(path.join(scratch, 'ro', 'audit.jsonl'), bwrap);
      const result = await outcome(child);
      child.stdin!.end();
      expect(result).toMatchObject({ code: 1, signal: null });
      expect(result.stderr).toMatch(/EROFS/);
    },
    EXIT_MS + 10_000,
  );

  test(
    'SIGTERM ends it at once, while it would be creating a directory under /proc',
    async () => {
      const child = serve('/proc/termgate-nope/deeper/audit.jsonl');
      const result = outcome(child);
      // Before the handler is installed SIGTERM's default ends it; after, serve stops. Never a SIGKILL.
      await new Promise((r) => setTimeout(r, 1500));
      child.kill('SIGTERM');
      const { signal, code } = await result;
      expect(signal === 'SIGTERM' || code === 0 || code === 1).toBe(true);
      expect(signal).not.toBe('SIGKILL');
    },
    EXIT_MS + 10_000,
  );

  test(
    'as an unprivileged user: the same clear error under /proc',
    async () => {
      const asRoot = process.getuid?.() === 0;
      const wrap = asRoot ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--'] : [];
      if (asRoot && spawnSync('setpriv', [...wrap.slice(1), 'test', '-r', SERVER_BIN]).status !== 0) {
        throw new Error(`user nobody cannot read ${SERVER_BIN}: this test needs the checkout readable`);
      }
      const child = serve('/proc/termgate-nope/audit.jsonl', wrap);
      child.stdin!.end();
      const result = await outcome(child);
      expect(result).toMatchObject({ code: 1, signal: null });
      expect(result.stderr).toMatch(/\/proc\/termgate-nope/);
    },
    EXIT_MS + 10_000,
  );
});
