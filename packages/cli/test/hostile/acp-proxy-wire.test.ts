/**
 * Hostile-wire tests of the built `termgate acp-proxy`: exact ids both ways,
 * duplicate terminal ids in flight, inherited descriptors, and an agent that
 * stops reading its answers.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { pause } from '../e2e/support/wire-server.js';
import { peakRss, spawnedPids } from './support/proc.js';
import { RawProxy, terminalRequest } from './support/raw-proxy.js';

describe('acp-proxy: ids are echoed byte for byte', () => {
  test('the agent’s terminal ids, and ids passed through in both directions', async () => {
    const proxy = RawProxy.start([
      { send: terminalRequest('9007199254740993', 'create', { command: 'true' }) },
      { waitFor: '"id":9007199254740993,' },
      { waitFor: '"method":"session/new"' },
      { send: '{"jsonrpc":"2.0","id":12345678901234567890123,"result":{"sessionId":"s1"}}' },
    ]);
    try {
      const created = await proxy.agentLine('"id":9007199254740993,');
      expect(JSON.parse(created).result.terminalId).toEqual(expect.any(String));
      proxy.editorIn.write(
        '{"jsonrpc":"2.0","id":12345678901234567890123,"method":"session/new","params":{}}\n',
      );
      expect(await proxy.agentLine('"id":12345678901234567890123')).toContain('"method":"session/new"');
      expect(await proxy.editorLine('"id":12345678901234567890123')).toContain('"sessionId":"s1"');
    } finally {
      await proxy.dispose();
    }
  });

  test('a terminal request whose id is already in flight is refused with -32600 and not run', async () => {
    const proxy = RawProxy.start([
      { send: terminalRequest('1', 'create', { command: 'sleep', args: ['1000'] }) },
      { waitFor: '"id":1,' },
      { send: terminalRequest('"w"', 'wait_for_exit', { terminalId: '{{terminalId}}' }) },
      { send: terminalRequest('"w"', 'create', { command: 'true' }) },
      { waitFor: '"id":"w"' },
      { send: terminalRequest('2', 'kill', { terminalId: '{{terminalId}}' }) },
    ]);
    try {
      const refused = JSON.parse(await proxy.agentLine('"id":"w"'));
      expect(refused.error.code).toBe(-32600);
      expect(refused.error.message).toMatch(/already used by a request in flight/);
      // The kill ends the wait: its one answer is the exit, not a second refusal.
      await proxy.agentLine('"id":2,');
      const answers = () => proxy.agentLines.filter((l) => l.includes('"id":"w"'));
      await proxy.until(() => (answers().length === 2 ? true : undefined), 'the wait answer', 10_000);
      expect(JSON.parse(answers()[1]!).result).toMatchObject({ signal: 'SIGTERM' });
      expect(spawnedPids(proxy.auditPath)).toHaveLength(1);
    } finally {
      await proxy.dispose();
    }
  });
});

describe('acp-proxy: inherited descriptors', () => {
  test('a pipe the launcher left at fd 251 is open neither in the agent nor in commands', async () => {
    const extra = [...Array(248).fill('ignore'), 'pipe'] as ('pipe' | 'ignore')[];
    const proxy = RawProxy.start(
      [
        { send: terminalRequest('1', 'create', { command: 'echo pwned >&251; echo "rc=$?"; sleep 1000' }) },
        { waitFor: '"id":1,' },
      ],
      extra,
    );
    let stolen = '';
    proxy.fd(251).on('data', (chunk) => {
      stolen += chunk;
    });
    try {
      await proxy.agentLine('"id":1,');
      const [pid] = await proxy.until(
        () => {
          const pids = spawnedPids(proxy.auditPath);
          return pids.length > 0 ? pids : undefined;
        },
        'the spawn record',
        10_000,
      );
      // The spawned pid is the launcher (perl) until it execs the command; its own descriptors are
      // its business: look once the command runs.
      await proxy.until(
        () =>
          readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'perl' &&
          readdirSync(`/proc/${pid}/fd`).length > 0
            ? true
            : undefined,
        'the command, exec’d by the launcher',
        5000,
      );
      expect(readdirSync(`/proc/${pid}/fd`).sort()).toEqual(['0', '1', '2']);
      const agentPid = Number(
        readFileSync(`/proc/${proxy.child.pid}/task/${proxy.child.pid}/children`, 'utf8')
          .trim()
          .split(' ')[0],
      );
      expect(readdirSync(`/proc/${agentPid}/fd`)).not.toContain('251');
      await pause(200);
      expect(stolen).toBe('');
    } finally {
      await proxy.dispose();
    }
  });
});

describe('acp-proxy: an agent that stops reading', () => {
  test('keeps the proxy memory bounded while 300 terminal/output answers of 1 MiB wait', async () => {
    const steps = [
      { send: terminalRequest('1', 'create', { command: 'head -c 1048576 /dev/zero | tr "\\0" x' }) },
      { waitFor: '"id":1,' },
      { send: terminalRequest('2', 'wait_for_exit', { terminalId: '{{terminalId}}' }) },
      { waitFor: '"id":2,' },
      { stopReading: true as const },
      ...Array.from({ length: 300 }, (_, i) => ({
        send: terminalRequest(String(100 + i), 'output', { terminalId: '{{terminalId}}' }),
      })),
    ];
    const proxy = RawProxy.start(steps);
    try {
      await proxy.until(
        () => (proxy.stderr.includes('SCRIPT-DONE') ? true : undefined),
        'the agent script',
        30_000,
      );
      const before = peakRss(proxy.child.pid!);
      let last = 0;
      for (let i = 0; i < 20; i++) {
        await pause(250);
        const now = peakRss(proxy.child.pid!);
        if (now === last && i > 4) break;
        last = now;
      }
      // Unbounded, 300 answers of 1 MiB each would hold about 1.4 GB. Bounded, what is built at once:
      // under 200 MB on Node 20, about 270 MB on Node 24 (whose heap grows further before it collects;
      // its start-up peak, the policy's checks, is already in `before`).
      expect(peakRss(proxy.child.pid!)).toBeLessThan(before + 400 * 1024 * 1024);
    } finally {
      await proxy.dispose();
    }
  }, 90_000);
});

describe('acp-proxy: approval questions are between termgate and the editor', () => {
  test('the editor’s answer is consumed, never reaches the agent, and a declined command never spawns', async () => {
    // The shipped default asks before any git push.
    const proxy = RawProxy.start([
      { send: terminalRequest('1', 'create', { command: 'git push --dry-run ./no-such-remote HEAD' }) },
      { waitFor: '"id":1,' },
    ]);
    try {
      const question = JSON.parse(await proxy.editorLine('"method":"session/request_permission"'));
      expect(question.id).toMatch(/^termgate-[0-9a-f-]{36}$/);
      expect(question.params.toolCall.title).toBe('git push --dry-run ./no-such-remote HEAD');
      // Nothing about the question reached the agent: it cannot learn the id to answer for the editor.
      expect(proxy.agentLines.some((l) => l.includes(question.id))).toBe(false);
      proxy.editorIn.write(
        `${JSON.stringify({ jsonrpc: '2.0', id: question.id, result: { outcome: { outcome: 'selected', optionId: 'reject_once' } } })}\n`,
      );
      const refused = JSON.parse(await proxy.agentLine('"id":1,'));
      expect(refused.error.code).toBe(-32010);
      expect(refused.error.data).toMatchObject({ approval: 'deny', ruleIds: ['ask-git-push'] });
      expect(proxy.agentLines.some((l) => l.includes(question.id))).toBe(false);
      expect(spawnedPids(proxy.auditPath)).toHaveLength(0);
    } finally {
      await proxy.dispose();
    }
  });
});
