import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { auditField, readAuditRecords, verifyAuditFile } from '@termgate/audit';
import { FileAuditSink } from '@termgate/audit/adapters';
import { PolicyGate, recordServerStart } from '@termgate/policy';
import { ProcessTerminalHost, TermhostError } from '@termgate/termhost';
import { CrossSpawnProcessSpawner } from '@termgate/termhost/adapters';
import { allow, TableJudge } from './support/table-judge.js';
import { tempDir } from './support/temp-dir.js';

/**
 * The gate wired into a real ProcessTerminalHost: when the audit record
 * cannot be written, the command is not run (a marker it would create stays
 * absent), even though the policy allows it.
 */
const POLICY = { path: '/etc/termgate/policy.yaml', sha256: 'c'.repeat(64) };

describe('PolicyGate in a ProcessTerminalHost', () => {
  let dir: ReturnType<typeof tempDir>;
  let marker: string;
  let host: ProcessTerminalHost | undefined;

  beforeEach(() => {
    dir = tempDir();
    marker = join(dir.path, 'marker');
  });
  afterEach(async () => {
    await host?.closeAll();
    host = undefined;
    dir.cleanup();
  });

  const judge = () => new TableJudge([{ match: /^touch /, decision: allow('touch is allowed', ['touch']) }]);
  const hostWith = (gate: PolicyGate) => {
    host = new ProcessTerminalHost({
      gate,
      observer: gate,
      spawner: new CrossSpawnProcessSpawner(),
      cwd: dir.path,
      digestOutput: true,
    });
    return host;
  };
  const createRejection = async (h: ProcessTerminalHost): Promise<TermhostError> => {
    try {
      await h.create({ command: `touch ${marker}` });
    } catch (error) {
      if (TermhostError.is(error)) return error;
      throw error;
    }
    throw new Error('create was not refused');
  };

  test('an allowed command runs and its whole life is in a verifiable trail', async () => {
    const file = join(dir.path, 'audit.jsonl');
    const sink = FileAuditSink.open(file);
    recordServerStart(sink, { policy: POLICY, version: '0.1.0' });
    const h = hostWith(new PolicyGate(judge(), sink, POLICY));
    const id = await h.create({ command: `touch ${marker}`, env: { TOKEN: 'value-never-logged' } });
    await h.waitForExit(id);
    await h.release(id);
    sink.close();

    expect(existsSync(marker)).toBe(true);
    const result = verifyAuditFile(file);
    expect(result).toMatchObject({ ok: true });
    const actions = [...readAuditRecords(file)].map((entry) =>
      'record' in entry ? auditField(entry.record, 'event.action') : entry.problem,
    );
    expect(actions).toEqual(
      expect.arrayContaining([
        'server-start',
        'terminal-create',
        'terminal-spawn',
        'terminal-wait',
        'terminal-exit',
      ]),
    );
    expect(actions.indexOf('terminal-create')).toBeLessThan(actions.indexOf('terminal-spawn'));
    expect(actions.indexOf('terminal-spawn')).toBeLessThan(actions.indexOf('terminal-exit'));
  });

  (process.platform === 'linux' ? test : test.skip)(
    'a full disk (/dev/full) refuses the create; nothing runs',
    async () => {
      const gate = new PolicyGate(judge(), FileAuditSink.open('/dev/full'), POLICY);
      const error = await createRejection(hostWith(gate));
      expect(error.code).toBe('GATE_DENIED');
      expect(error.message).toMatch(/audit trail unavailable: .*ENOSPC.*nothing was run/);
      expect(existsSync(marker)).toBe(false);
    },
  );

  test('an audit directory removed after start refuses the create; nothing runs', async () => {
    const auditDir = join(dir.path, 'audit');
    mkdirSync(auditDir);
    const sink = FileAuditSink.open(join(auditDir, 'audit.jsonl'));
    recordServerStart(sink, { policy: POLICY, version: '0.1.0' });
    rmSync(auditDir, { recursive: true });
    const error = await createRejection(hostWith(new PolicyGate(judge(), sink, POLICY)));
    expect(error.message).toMatch(/audit trail unavailable: audit file .* is gone/);
    expect(existsSync(marker)).toBe(false);
  });

  test('a closed sink refuses the create; nothing runs', async () => {
    const sink = FileAuditSink.open(join(dir.path, 'audit.jsonl'));
    sink.close();
    const error = await createRejection(hostWith(new PolicyGate(judge(), sink, POLICY)));
    expect(error.message).toMatch(/audit trail unavailable: .*closed/);
    expect(existsSync(marker)).toBe(false);
  });
});
