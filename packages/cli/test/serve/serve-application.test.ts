import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { readAuditRecords, verifyAuditFile } from '@termgate/audit';
import { pino } from 'pino';
import { isAlive } from '../../../../test-support/processes.js';
import { buildContainer } from '../../src/composition/composition-root.js';
import type { PolicyRuntime } from '../../src/composition/policy-runtime.js';
import { POLICY_RUNTIME } from '../../src/composition/tokens.js';
import { ServeApplication } from '../../src/serve/serve-application.js';

/** The policy judge runs in a worker process; jest runs the sources, so it points the runtime at the built worker. */
const JUDGE_WORKER = resolve(
  import.meta.dirname,
  '..',
  '..',
  '..',
  'policy',
  'dist',
  'adapters',
  'judge-worker.js',
);

describe('ServeApplication (composition root wired with real adapters)', () => {
  it('serves MCP over the given streams and, at end of input, kills every terminal and resolves', async () => {
    const auditPath = join(mkdtempSync(join(tmpdir(), 'termgate-serve-')), 'audit.jsonl');
    const config = {
      policyPath: null,
      auditPath,
      auditFsync: false,
      shell: null,
      logLevel: 'silent' as const,
      logFormat: null,
      cwd: process.cwd(),
    };
    const notices: string[] = [];
    const record = (line: string): void => {
      notices.push(line);
    };
    const container = buildContainer(
      config,
      pino({ level: 'silent' }),
      { notice: record, warning: record, anchor: record, problem: record },
      { reclaimExited: true, judgeWorkerPath: JUDGE_WORKER },
    );
    const app = container.get(ServeApplication);
    await container.getAsync<PolicyRuntime>(POLICY_RUNTIME);
    expect(notices[0]).toMatch(/no --policy given: using the default policy .*policies\/default\.yaml/);
    expect(container.get(ServeApplication)).toBe(app);
    const input = new PassThrough();
    const output = new PassThrough();
    const lines: Record<string, unknown>[] = [];
    let buffered = '';
    output.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const parts = buffered.split('\n');
      buffered = parts.pop()!;
      for (const part of parts) lines.push(JSON.parse(part));
    });
    const running = app.run(input, output, { endOutputOnClose: true });
    const until = async (predicate: () => boolean): Promise<void> => {
      while (!predicate()) await new Promise((resolve) => setTimeout(resolve, 10));
    };
    input.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'terminal_create', arguments: { command: 'echo $$; exec sleep 1000', waitSeconds: 0 } } })}\n`,
    );
    await until(() => lines.some((l) => l.id === 1));
    const terminalId = (
      (lines[0]!.result as Record<string, unknown>).structuredContent as { terminalId: string }
    ).terminalId;
    let pid = 0;
    while (pid === 0) {
      input.write(
        `${JSON.stringify({ jsonrpc: '2.0', id: 'o', method: 'tools/call', params: { name: 'terminal_output', arguments: { terminalId } } })}\n`,
      );
      await until(() => lines.some((l) => l.id === 'o'));
      const snapshot = (
        lines.splice(
          lines.findIndex((l) => l.id === 'o'),
          1,
        )[0]!.result as Record<string, unknown>
      ).structuredContent as { output: string };
      if (Number.parseInt(snapshot.output, 10) > 0) {
        // The default policy sandboxes the command, so `$$` is a pid of its own namespace: the
        // host pid of the terminal's leader is in the trail's spawn record.
        const spawn = [...readAuditRecords(auditPath)].find(
          (r) =>
            'record' in r && (r.record as { event: { action: string } }).event.action === 'terminal-spawn',
        );
        pid = spawn && 'record' in spawn ? (spawn.record as { process: { pid: number } }).process.pid : 0;
      }
    }
    expect(isAlive(pid)).toBe(true);
    input.end();
    await running;
    expect(isAlive(pid)).toBe(false);
    expect(output.writableEnded).toBe(true);
    // Every verb went through the policy gate and the trail is intact, ending with the stop record.
    expect(verifyAuditFile(auditPath)).toMatchObject({ ok: true });
    const actions = [...readAuditRecords(auditPath)].map((r) =>
      'record' in r ? (r.record as { event: { action: string } }).event.action : r.problem,
    );
    expect(actions[0]).toBe('server-start');
    expect(actions).toEqual(
      expect.arrayContaining(['terminal-create', 'terminal-spawn', 'terminal-output', 'terminal-exit']),
    );
    expect(actions.at(-1)).toBe('server-stop');
  });

  it('shuts down as on EOF when the client reads nothing for the stall timeout, killing every terminal', async () => {
    const auditPath = join(mkdtempSync(join(tmpdir(), 'termgate-serve-')), 'audit.jsonl');
    const config = {
      policyPath: null,
      auditPath,
      auditFsync: false,
      shell: null,
      logLevel: 'silent' as const,
      logFormat: null,
      cwd: process.cwd(),
    };
    const quiet = {
      notice: () => undefined,
      warning: () => undefined,
      anchor: () => undefined,
      problem: () => undefined,
    };
    const container = buildContainer(config, pino({ level: 'silent' }), quiet, {
      reclaimExited: true,
      judgeWorkerPath: JUDGE_WORKER,
    });
    await container.getAsync<PolicyRuntime>(POLICY_RUNTIME);
    const app = container.get(ServeApplication);
    const input = new PassThrough();
    const firstLines: string[] = [];
    // A client that takes the first chunk and then never reads again: nothing written later drains.
    const stuck = new Writable({
      highWaterMark: 64,
      write(chunk: Buffer, _encoding, callback) {
        if (firstLines.length === 0) {
          firstLines.push(chunk.toString());
          callback();
        }
      },
    });
    const running = app.run(input, stuck, { endOutputOnClose: true, stallTimeoutMs: 300 });
    input.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'terminal_create', arguments: { command: 'echo $$; exec sleep 1000' } } })}\n`,
    );
    while (firstLines.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    const { terminalId } = (
      JSON.parse(firstLines[0]!).result as { structuredContent: { terminalId: string } }
    ).structuredContent;
    for (let i = 0; i < 50; i++) {
      input.write(
        `${JSON.stringify({ jsonrpc: '2.0', id: `o${i}`, method: 'tools/call', params: { name: 'terminal_output', arguments: { terminalId } } })}\n`,
      );
    }
    // No end of input: the stall alone ends the run.
    await running;
    const records = [...readAuditRecords(auditPath)].map(
      (r) => ('record' in r ? r.record : {}) as { event?: { action: string; reason?: string } },
    );
    expect(records.some((r) => r.event?.action === 'terminal-exit')).toBe(true);
    expect(records.at(-1)?.event?.action).toBe('server-stop');
  });
});
