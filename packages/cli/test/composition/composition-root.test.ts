import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as auditPackage from '@termgate/audit';
import { AcpProxy, McpServer } from '@termgate/core';
import * as policyPackage from '@termgate/policy';
import { PolicyGate } from '@termgate/policy';
import * as termhostPackage from '@termgate/termhost';
import { ProcessTerminalHost } from '@termgate/termhost';
import { DeferredTerminalHost } from '@termgate/termhost/adapters';
import { pino } from 'pino';
import { buildContainer } from '../../src/composition/composition-root.js';
import type { PolicyRuntime } from '../../src/composition/policy-runtime.js';
import * as cliTokens from '../../src/composition/tokens.js';
import { ServeApplication } from '../../src/serve/serve-application.js';
import type { ServeConfig } from '../../src/serve/serve-config.js';

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

/** Every `Symbol.for('termgate.…')` a module exports: the service identifiers. */
function tokensOf(module: Record<string, unknown>): Array<[string, symbol]> {
  return Object.entries(module).filter(
    (entry): entry is [string, symbol] =>
      typeof entry[1] === 'symbol' && (entry[1].description ?? '').startsWith('termgate.'),
  );
}

describe('the composition root', () => {
  let dir: string;
  let config: ServeConfig;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'termgate-root-'));
    writeFileSync(join(dir, 'policy.yaml'), 'default: allow\n');
    config = {
      policyPath: join(dir, 'policy.yaml'),
      auditPath: join(dir, 'audit.jsonl'),
      auditFsync: false,
      shell: null,
      logLevel: 'silent',
      logFormat: null,
      cwd: dir,
    };
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const build = (reclaimExited: boolean) =>
    buildContainer(
      config,
      pino({ level: 'silent' }),
      {
        notice: () => undefined,
        warning: () => undefined,
        anchor: () => undefined,
        problem: () => undefined,
      },
      { reclaimExited, judgeWorkerPath: JUDGE_WORKER },
    );

  test('binds every service identifier of termhost, policy and the cli, and resolves each', async () => {
    const container = build(true);
    const runtime = await container.getAsync<PolicyRuntime>(cliTokens.POLICY_RUNTIME);
    try {
      const tokens = [
        ...tokensOf(termhostPackage),
        ...tokensOf(auditPackage),
        ...tokensOf(policyPackage),
        ...tokensOf(cliTokens),
      ];
      expect(tokens.map(([name]) => name)).toEqual(
        expect.arrayContaining(['GATE', 'PROCESS_SPAWNER', 'TERMINAL_OBSERVER', 'TERMINAL_HOST']),
      );
      expect(tokens.map(([name]) => name)).toEqual(expect.arrayContaining(['AUDIT_SINK', 'COMMAND_JUDGE']));
      for (const [name, token] of tokens) {
        expect([name, container.isBound(token)]).toEqual([name, true]);
        await expect(container.getAsync(token)).resolves.toBeDefined();
      }
      // One graph: the gate is the runtime's, also the terminals' observer, and it writes to the bound sink.
      const gate = await container.getAsync(termhostPackage.GATE);
      expect(gate).toBeInstanceOf(PolicyGate);
      expect(gate).toBe(runtime.gate);
      expect(await container.getAsync(termhostPackage.TERMINAL_OBSERVER)).toBe(gate);
      expect(await container.getAsync(auditPackage.AUDIT_SINK)).toBe(runtime.sink);
      expect(await container.getAsync(termhostPackage.TERMINAL_HOST)).toBeInstanceOf(DeferredTerminalHost);
      expect(await container.getAsync(ProcessTerminalHost)).toBeInstanceOf(ProcessTerminalHost);
      expect(container.get(ServeApplication)).toBe(container.get(ServeApplication));
      expect(container.get(McpServer)).toBeInstanceOf(McpServer);
      expect(container.get(AcpProxy)).toBeInstanceOf(AcpProxy);
    } finally {
      await (await container.getAsync(ProcessTerminalHost)).closeAll();
      runtime.stop('test over');
    }
  });

  test('fails closed: an invalid policy rejects POLICY_RUNTIME, and every terminal verb with it', async () => {
    writeFileSync(config.policyPath!, 'default: maybe\n');
    const container = build(false);
    await expect(container.getAsync(cliTokens.POLICY_RUNTIME)).rejects.toThrow(/policy\.yaml:1:/);
    const host = container.get<termhostPackage.TerminalHost>(termhostPackage.TERMINAL_HOST);
    await expect(host.create({ command: 'true', cwd: dir })).rejects.toMatchObject({ code: 'HOST_CLOSED' });
  });
});
